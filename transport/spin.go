package transport

import (
	"runtime"
	"syscall"
	"time"
)

// spinner lets a reader whose delivery was answered at once poll its socket
// for the next datagram before it parks in the runtime's poller. Parking
// costs a wake-up when that datagram arrives; when the other CPU is idle
// that is an inter-processor interrupt, which on a virtual machine costs
// tens of microseconds per hop of a request/reply exchange. A reader polls
// only after a delivery during which the Endpoint sent (a handler replied,
// or the node answered with an ACK), and at most SpinWait; a stream that is
// only received never makes it poll.
type spinner struct {
	limit time.Duration // 0: never poll
	rc    syscall.RawConn
	st    *counters
}

// wait polls the socket until it holds a datagram or the limit passed,
// letting the process's other goroutines run between polls. It reports
// whether a datagram is ready.
func (s *spinner) wait() bool {
	if s.limit <= 0 || s.rc == nil {
		return false
	}
	s.st.spinWaits.Add(1)
	deadline := time.Now().Add(s.limit)
	for {
		if s.readable() {
			s.st.spinHits.Add(1)
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		runtime.Gosched()
	}
}
