package faultnet

import (
	"container/heap"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/rsbd/rsbd/transport"
)

// Endpoint is one daemon's attachment to a Network. It implements
// transport.Conn: Send, Join, Leave, LocalAddr, Close. Its Handler is called
// from one goroutine per endpoint, in delivery order.
type Endpoint struct {
	n    *Network
	addr netip.AddrPort
	h    transport.Handler

	// Guarded by n.mu.
	closed  bool
	joined  map[netip.AddrPort]bool
	pending pendingHeap // delayed datagrams, earliest first
	seq     uint64      // tie-break of equal arrival times: send order
	timer   *time.Timer // fires at timerAt to move due datagrams to inbox
	timerAt time.Time   // zero when the timer is not armed
	inbox   []transport.Packet
	rcvs    []*Endpoint     // Send scratch
	delays  []time.Duration // Send scratch

	wake   chan struct{} // 1-buffered: inbox is not empty
	done   chan struct{} // closed by Close
	exited chan struct{} // closed when the delivery goroutine returns
}

func newEndpoint(n *Network, addr netip.AddrPort, h transport.Handler) *Endpoint {
	e := &Endpoint{n: n, addr: addr, h: h, joined: map[netip.AddrPort]bool{},
		wake: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
	go e.run()
	return e
}

// LocalAddr returns the endpoint's unicast address.
func (e *Endpoint) LocalAddr() netip.AddrPort { return e.addr }

// Send offers every datagram of bufs to every destination of dst; each
// receiving link decides its fate. Datagrams are copied: the caller may
// reuse bufs when Send returns.
func (e *Endpoint) Send(dst []netip.AddrPort, bufs ...[]byte) error {
	for _, b := range bufs {
		if len(b) > e.n.cfg.MaxDatagram {
			return fmt.Errorf("%w: %d bytes, limit %d", transport.ErrTooLarge, len(b), e.n.cfg.MaxDatagram)
		}
	}
	for _, d := range dst {
		if _, err := transport.CheckDest(d); err != nil {
			return err
		}
	}
	n := e.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if e.closed {
		return transport.ErrClosed
	}
	now := time.Now()
	for _, b := range bufs {
		for _, d := range dst {
			d = netip.AddrPortFrom(d.Addr().Unmap(), d.Port())
			e.rcvs = n.receivers(e, d, e.rcvs[:0])
			for _, r := range e.rcvs {
				e.delays = n.transmit(e, r, b, now, e.delays)
			}
		}
	}
	clear(e.rcvs)
	return nil
}

// Join makes the endpoint a member of the group.
func (e *Endpoint) Join(group netip.AddrPort) error {
	g, err := transport.CheckGroup(group)
	if err != nil {
		return err
	}
	e.n.mu.Lock()
	defer e.n.mu.Unlock()
	if e.closed {
		return transport.ErrClosed
	}
	if !e.joined[g] {
		e.joined[g] = true
		e.n.join(e, g)
	}
	return nil
}

// Leave ends the endpoint's membership of the group.
func (e *Endpoint) Leave(group netip.AddrPort) error {
	g, err := transport.CheckGroup(group)
	if err != nil {
		return err
	}
	e.n.mu.Lock()
	defer e.n.mu.Unlock()
	if e.closed {
		return transport.ErrClosed
	}
	if e.joined[g] {
		delete(e.joined, g)
		e.n.leave(e, g)
	}
	return nil
}

// Close detaches the endpoint, drops what is in flight to it and waits for
// its delivery goroutine. It is idempotent and must not be called from the
// Handler.
func (e *Endpoint) Close() error {
	n := e.n
	n.mu.Lock()
	if !e.closed {
		e.closed = true
		delete(n.endpoints, e.addr)
		for g := range e.joined {
			n.leave(e, g)
		}
		if e.timer != nil {
			e.timer.Stop()
		}
		e.pending, e.inbox = nil, nil
		close(e.done)
	}
	n.mu.Unlock()
	<-e.exited
	return nil
}

// schedule queues a datagram arriving at the given time. Caller holds n.mu.
func (e *Endpoint) schedule(l *link, p transport.Packet, at, now time.Time) {
	if e.closed {
		return
	}
	if !at.After(now) {
		e.enqueue(l, p)
		return
	}
	e.seq++
	heap.Push(&e.pending, arrival{at: at, seq: e.seq, link: l, pkt: p})
	if e.timerAt.IsZero() || at.Before(e.timerAt) {
		e.arm(at, now)
	}
}

// arm sets the timer to fire at the given time. Caller holds n.mu.
func (e *Endpoint) arm(at, now time.Time) {
	e.timerAt = at
	if e.timer == nil {
		e.timer = time.AfterFunc(at.Sub(now), e.fire)
	} else {
		e.timer.Reset(at.Sub(now))
	}
}

// fire moves the datagrams that are due to the inbox and re-arms the timer.
func (e *Endpoint) fire() {
	n := e.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if e.closed {
		return
	}
	now := time.Now()
	for len(e.pending) > 0 && !e.pending[0].at.After(now) {
		a := heap.Pop(&e.pending).(arrival)
		if n.blackedOut(e.addr, now) {
			a.link.stats.BlackedOut++
			continue
		}
		e.enqueue(a.link, a.pkt)
	}
	e.timerAt = time.Time{}
	if len(e.pending) > 0 {
		e.arm(e.pending[0].at, now)
	}
}

// enqueue hands a datagram to the delivery goroutine, or drops it if the
// queue is full. Caller holds n.mu.
func (e *Endpoint) enqueue(l *link, p transport.Packet) {
	if len(e.inbox) >= e.n.cfg.QueueLimit {
		l.stats.QueueDrops++
		return
	}
	l.stats.Delivered++
	e.inbox = append(e.inbox, p)
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// run is the delivery goroutine: it hands queued datagrams to the Handler
// until Close.
func (e *Endpoint) run() {
	defer close(e.exited)
	var batch []transport.Packet
	for {
		select {
		case <-e.done:
			return
		case <-e.wake:
		}
		for {
			batch = e.take(batch)
			if len(batch) == 0 {
				break
			}
			e.h(batch)
			clear(batch)
		}
	}
}

// take moves up to maxBatch datagrams from the inbox to buf.
func (e *Endpoint) take(buf []transport.Packet) []transport.Packet {
	e.n.mu.Lock()
	defer e.n.mu.Unlock()
	if e.closed {
		return buf[:0]
	}
	k := min(len(e.inbox), maxBatch)
	buf = append(buf[:0], e.inbox[:k]...)
	e.inbox = slices.Delete(e.inbox, 0, k)
	return buf
}

// arrival is a delayed datagram.
type arrival struct {
	at   time.Time
	seq  uint64
	link *link
	pkt  transport.Packet
}

// pendingHeap orders arrivals by time, then by send order.
type pendingHeap []arrival

func (h pendingHeap) Len() int { return len(h) }
func (h pendingHeap) Less(i, j int) bool {
	if c := h[i].at.Compare(h[j].at); c != 0 {
		return c < 0
	}
	return h[i].seq < h[j].seq
}
func (h pendingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pendingHeap) Push(x any)   { *h = append(*h, x.(arrival)) }
func (h *pendingHeap) Pop() any {
	old := *h
	a := old[len(old)-1]
	old[len(old)-1] = arrival{}
	*h = old[:len(old)-1]
	return a
}
