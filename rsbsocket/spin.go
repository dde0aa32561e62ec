package rsbsocket

import (
	"net"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rsbd/rsbd/internal/spinpay"
	"github.com/rsbd/rsbd/rsbsocket/internal/sockio"
)

// A request and its reply through the server cross it twice: client A's
// reader relays the request to B, then B's reader relays the reply to A.
// When the daemon's threads park between the two, the reply wakes one of
// them from idle, which on a virtual machine is costly. So a reader that
// relayed a frame to one connection, which has answered the last relays
// to it at once, polls that connection's socket and its own for up to
// Config.SpinWait before it parks (awaitAnswer). Once the answer is there
// the reader parks and the runtime hands its thread straight to B's
// reader, without a wake-up. Which connections answer is learnt from the
// traffic (noteAnswer): a subscriber that only receives never makes a
// reader poll. A client in the server's own process (tests, a program
// embedding the server) answers on the same threads as the poll, which
// would only hold them up: its connection never makes a reader poll
// (elsewhere).
//
// A reader never polls for the answer of a Unix socket client: a write to
// a Unix socket hands the woken client to the scheduler as one whose waker
// is about to sleep, which the polling reader is not, so polling makes
// such round trips slower (docs/TUNING.md).
//
// Polling helps a daemon that would go idle between a request and its
// reply, and it takes a CPU from the clients meanwhile. So a reader polls
// only for a single conversation: while at most two connections answer
// (answeringMax) and no other reader polls; it stops as soon as another
// reader reads a frame (Stats.FramesIn moves). With several request/reply
// pairs at once the daemon's threads are busier and the clients need the
// CPUs, and polling lowers the rate of round trips (docs/TUNING.md).
// On a busy host the polling thread competes for the CPU with others and
// the answer waits for it: the server's spinpay.Gate stops polling while
// too few recent polls saw their answer, and a poll that finds it lost its
// CPU between two checks ends as a miss.

// epoch is the origin of the relay times connections keep.
var epoch = time.Now()

// monoNow is the time since epoch in nanoseconds, never 0 (0 is "none").
func monoNow() int64 { return int64(time.Since(epoch)) | 1 }

// relayed notes that a reader has just written frames to c itself: the
// next frame c sends within SpinWait counts as its answer.
func (c *conn) relayed() { c.relayedAt.Store(monoNow()) }

// noteAnswer runs on c's reader when a frame arrives after its buffer ran
// empty. A frame within SpinWait of the last relay to c counts as an
// answer, a later one resets the count; a frame with no relay before it
// (c publishing on its own) leaves the count alone.
func (c *conn) noteAnswer() {
	at := c.relayedAt.Load()
	if at == 0 {
		return
	}
	c.relayedAt.Store(0)
	if time.Duration(monoNow()-at) > c.srv.cfg.SpinWait {
		c.stopAnswering()
		return
	}
	if n := c.answers.Load(); n < answersMax {
		c.answers.Store(n + 1)
		if n+1 == answersMin {
			c.srv.answering.Add(1)
		}
	}
}

// stopAnswering resets c's count of answered relays, on its reader or once
// the reader is gone.
func (c *conn) stopAnswering() {
	if c.answers.Swap(0) >= answersMin {
		c.srv.answering.Add(-1)
	}
}

// answerPoll is a reader's poll for an answer, made once per connection
// that polls (its bound methods would otherwise be allocated per poll).
type answerPoll struct {
	t        *conn // the connection expected to answer
	deadline time.Time
	own      uintptr
	fds      [2]unix.PollFd
	hit      bool
	// missed is set when the poll ran out or lost its CPU: what the gate
	// counts against polling. A poll another reader's frame ended is
	// neither a hit nor a miss.
	missed   bool
	frames   uint64           // the server's count of frames read when the poll began: when it moves, another reader is busy
	withOwn  func(fd uintptr) // ownFD and peerFD, bound once
	withPeer func(fd uintptr)
}

// awaitAnswer polls for t's answer when t has been answering relays: it
// returns once t's socket or c's own has data (or has ended), or after
// SpinWait. It runs on c's reader, with nothing left in its buffer.
func (c *conn) awaitAnswer(st *readState, t *conn) {
	s := c.srv
	if s.cfg.SpinWait <= 0 || c.raw == nil || t.raw == nil || t.overUnix() || t.answers.Load() < answersMin || !t.elsewhere() {
		return
	}
	if s.answering.Load() > answeringMax || !s.spinGate.Allow() || !s.polling.CompareAndSwap(false, true) {
		return
	}
	defer s.polling.Store(false)
	p := st.poll
	if p == nil {
		p = &answerPoll{}
		p.withOwn, p.withPeer = p.ownFD, p.peerFD
		st.poll = p
	}
	p.t, p.hit, p.missed, p.deadline = t, false, false, time.Now().Add(s.cfg.SpinWait)
	p.frames = s.stats.framesIn.Load()
	s.stats.spinWaits.Add(1)
	// Control holds both descriptors open while they are polled.
	_ = c.raw.Control(p.withOwn)
	p.t = nil
	switch {
	case p.hit:
		s.stats.spinHits.Add(1)
		s.spinGate.Record(true)
	case p.missed:
		s.spinGate.Record(false)
	}
}

// overUnix reports whether c's client is connected over a Unix socket.
func (c *conn) overUnix() bool {
	_, ok := c.remote.(*net.UnixAddr)
	return ok
}

// ownFD has the reader's descriptor; it goes on to the peer's.
func (p *answerPoll) ownFD(fd uintptr) {
	p.own = fd
	_ = p.t.raw.Control(p.withPeer)
}

// peerFD polls both descriptors, without waiting, until one is readable or
// the deadline passed, letting the process's other goroutines run between
// polls.
func (p *answerPoll) peerFD(fd uintptr) {
	p.fds = [2]unix.PollFd{
		{Fd: int32(p.own), Events: unix.POLLIN},
		{Fd: int32(fd), Events: unix.POLLIN},
	}
	prev := time.Now()
	for {
		n, err := unix.Poll(p.fds[:], 0)
		if n > 0 {
			p.hit = true
			return
		}
		if (err != nil && err != unix.EINTR) || p.t.srv.stats.framesIn.Load() != p.frames {
			return
		}
		now := time.Now()
		if now.After(p.deadline) || spinpay.Preempted(prev, now) {
			p.missed = true
			return
		}
		prev = now
		runtime.Gosched()
	}
}

// Where a connection's client runs (conn.peer).
const (
	peerUnknown int32 = iota
	peerElsewhere
	peerHere
)

// elsewhere reports whether c's client runs in another process: a TCP
// client not among the process's own (sockio.IsOwnClient), or a Unix socket client with another process
// id. It is worked out once, when first asked (by then the client has
// long finished dialling).
func (c *conn) elsewhere() bool {
	switch c.peer.Load() {
	case peerElsewhere:
		return true
	case peerHere:
		return false
	}
	where := peerElsewhere
	if c.clientHere() {
		where = peerHere
	}
	c.peer.Store(where)
	return where == peerElsewhere
}

// clientHere reports whether c's client is in this process.
func (c *conn) clientHere() bool {
	switch a := c.remote.(type) {
	case *net.TCPAddr:
		return sockio.IsOwnClient(a.String())
	case *net.UnixAddr:
		pid := -1
		_ = c.raw.Control(func(fd uintptr) {
			if u, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
				pid = int(u.Pid)
			}
		})
		return pid == os.Getpid()
	}
	return false
}
