package transport

import "sync/atomic"

// Stats are an Endpoint's counters since Open. Every datagram dropped by
// the transport is counted under its reason.
type Stats struct {
	// Sent counts datagrams handed to the kernel, one per destination.
	Sent uint64
	// SendErrors counts datagrams the kernel refused.
	SendErrors uint64
	// Received counts datagrams handed to the Handler.
	Received uint64
	// ReceiveErrors counts failed reads.
	ReceiveErrors uint64
	// Oversize counts datagrams dropped for exceeding MaxDatagram.
	Oversize uint64
	// Own counts this Endpoint's own multicast datagrams dropped on their
	// way back (see Config.ReceiveOwn).
	Own uint64
	// KernelDrops counts datagrams the kernel dropped because a socket's
	// receive buffer was full (SO_RXQ_OVFL; Linux only), as last reported
	// by each socket.
	KernelDrops uint64
	// SpinWaits counts the times a reader polled its socket after a
	// delivery its Handler answered (Config.SpinWait); SpinHits those in
	// which a datagram came while it polled.
	SpinWaits, SpinHits uint64
	// SpinResumes counts the polls that went on after a batch of only this
	// Endpoint's own datagrams (looped back from a joined group) came while
	// the reader polled for an answer; their hits are in SpinHits.
	SpinResumes uint64
	// SpinSkips counts the answered deliveries after which a reader did
	// not poll because too few recent polls found their answer.
	SpinSkips uint64
	// SpinInProcess counts the answered deliveries after which a reader
	// did not poll because they came from another Endpoint of this
	// process.
	SpinInProcess uint64
	// Groups is the number of joined groups.
	Groups int
	// Sockets is the number of open sockets, the unicast one included.
	Sockets int
	// RecvBuffer and SendBuffer are the SO_RCVBUF and SO_SNDBUF sizes the
	// kernel granted, as it reports them (Linux reports twice the usable
	// size); 0 if unknown.
	RecvBuffer, SendBuffer int
}

type counters struct {
	sent, sendErrors, received, receiveErrors, oversize, own atomic.Uint64
	spinWaits, spinHits, spinResumes, spinInProcess          atomic.Uint64
	rcvbuf, sndbuf                                           atomic.Int64
}

// Stats returns a snapshot of the counters.
func (e *Endpoint) Stats() Stats {
	c := &e.stats
	s := Stats{
		Sent: c.sent.Load(), SendErrors: c.sendErrors.Load(),
		Received: c.received.Load(), ReceiveErrors: c.receiveErrors.Load(),
		Oversize: c.oversize.Load(), Own: c.own.Load(),
		SpinWaits: c.spinWaits.Load(), SpinHits: c.spinHits.Load(),
		SpinResumes: c.spinResumes.Load(), SpinInProcess: c.spinInProcess.Load(),
		SpinSkips:  e.spinGate.Skips(),
		RecvBuffer: int(c.rcvbuf.Load()), SendBuffer: int(c.sndbuf.Load()),
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s.KernelDrops = e.retired + uint64(e.uni.drops.Load())
	s.Sockets = 1
	for _, socks := range e.ports {
		for _, k := range socks {
			s.KernelDrops += uint64(k.drops.Load())
			s.Sockets++
		}
	}
	s.Groups = len(e.groups)
	if e.closed.Load() {
		s.Sockets = 0
	}
	return s
}
