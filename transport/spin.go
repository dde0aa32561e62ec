package transport

import (
	"runtime"
	"syscall"
	"time"

	"github.com/rsbd/rsbd/internal/spinpay"
)

// spinner lets a reader whose delivery was answered at once poll its socket
// for the next datagram before it parks in the runtime's poller. Parking
// costs a wake-up when that datagram arrives; when the other CPU is idle
// that is an inter-processor interrupt, which on a virtual machine costs
// tens of microseconds per hop of a request/reply exchange. A reader polls
// only after a delivery its Handler answered (Answered: a reply went out
// from the reading goroutine), and at most SpinWait; streams that are only
// received, and protocol traffic such as ACKs, never make it poll.
//
// The reply itself may come back first: a group the reply goes to can share
// its multicast address with a group this Endpoint joined (scopes hash onto
// a small pool), and the kernel loops the reply back to the joined socket.
// A batch of only this Endpoint's own datagrams is not the answer, so the
// reader resumes polling until the same deadline (resume) rather than park.
//
// A poll pays only while answers come within it: on a busy host the polling
// thread competes with others for the CPU and the answer waits for it. The
// Endpoint's spinpay.Gate stops polling while too few recent polls hit, and
// a poll that finds it lost its CPU between two checks ends as a miss.
type spinner struct {
	limit time.Duration // 0: never poll
	rc    syscall.RawConn
	st    *counters
	// gate, if set, decides whether a poll pays.
	gate *spinpay.Gate
	// until is the deadline of the poll under way, zero when none is:
	// set by wait, kept across batches of own datagrams, cleared by any
	// other batch and by a poll that ran out.
	until time.Time
	// inq is what the last readable read of the socket's queue, through
	// inqFn, made once so that a poll allocates nothing.
	inq   int
	inqFn func(fd uintptr)
}

// Answered tells the Endpoint that the Handler call under way was answered:
// a reply to what it delivered went out from the reading goroutine. When the
// call returns, the reader polls its socket for the next datagram, the
// answer to the reply, for up to Config.SpinWait before it sleeps. It may
// be called from the Handler only.
func (e *Endpoint) Answered() { e.answers.Add(1) }

// wait polls the socket until it holds a datagram or the limit passed,
// letting the process's other goroutines run between polls. It reports
// whether a datagram is ready.
func (s *spinner) wait() bool {
	if s.limit <= 0 || s.rc == nil || (s.gate != nil && !s.gate.Allow()) {
		return false
	}
	s.st.spinWaits.Add(1)
	s.until = time.Now().Add(s.limit)
	return s.poll()
}

// resume goes on with the poll under way after a batch that held only this
// Endpoint's own datagrams, until the deadline wait set. It reports whether
// a datagram is ready; false when no poll was under way or it ran out.
func (s *spinner) resume() bool {
	if s.until.IsZero() {
		return false
	}
	s.st.spinResumes.Add(1)
	return s.poll()
}

// poll polls until a datagram is queued or s.until passed, when it clears
// s.until.
func (s *spinner) poll() bool {
	prev := time.Now()
	for {
		if s.readable() {
			s.st.spinHits.Add(1)
			s.record(true)
			return true
		}
		now := time.Now()
		if now.After(s.until) || spinpay.Preempted(prev, now) {
			s.until = time.Time{}
			s.record(false)
			return false
		}
		prev = now
		runtime.Gosched()
	}
}

// record tells the gate, if any, how a poll ended.
func (s *spinner) record(hit bool) {
	if s.gate != nil {
		s.gate.Record(hit)
	}
}
