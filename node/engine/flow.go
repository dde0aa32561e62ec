package engine

import (
	"math"
	"time"

	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/transport/datagram"
)

// Flow control for reliable streams. Receivers ACK their progress (the
// lowest unresolved sequence number) to the sender, and hold their ACKs
// while a local socket client's queue is at its high watermark (events from
// the network must not overflow it); a sender stream whose
// datagrams in flight to its slowest active receiver exceed the window stops
// the engine from taking new publishes (Publish blocks, which back-pressures
// socket clients over TCP) until ACKs open the window again. A receiver that
// has not ACKed for ackTimeout stops counting, so a dead or stuck peer cannot
// block the bus; memberlist departures remove it at once.

// rxProgress is what a sender knows of one receiver of its stream. The zero
// instance is a placeholder at the stream's start, used until the first ACK.
type rxProgress struct {
	edge uint64
	at   time.Time
}

// ackState is what a receiving engine last ACKed on one stream.
type ackState struct {
	edge uint64
	at   time.Time
}

// FlowWindow returns the flow-control window in datagrams of an engine
// configured with cfg; peers are assumed to run with the same limits. It
// fits the window in half of the receive buffer the kernel granted
// (cfg.RecvBuffer): the kernel charges each datagram's whole buffer, so a
// window of flowWindowBytes of 60 000-byte datagrams nearly fills the
// usual 8 MiB, and a publish may overshoot the window by one event's
// fragments, repairs and heartbeats; an overflowing socket buffer costs a
// NACK round per lost datagram. It also fits the window in half of what an
// ordered receiver holds behind a hole (its reorder bounds): everything in
// flight after a lost datagram waits there for the repair, and a hold that
// overflows gives the hole up as lost.
func FlowWindow(cfg Config) uint64 {
	cfg.applyDefaults()
	w := flowWindowBytes / cfg.MaxDatagram
	if cfg.RecvBuffer > 0 {
		w = min(w, cfg.RecvBuffer/DatagramTruesize(cfg.MaxDatagram)/2)
	}
	w = min(w, cfg.Streams.Receivers.Receiver.HeldDatagrams(cfg.MaxDatagram)/2)
	limit := cfg.Streams.Sender.RetainCount
	if limit == 0 {
		limit = defaultRetainCount
	}
	return uint64(max(MinFlowWindow, min(w, limit/2)))
}

// DatagramTruesize estimates what the kernel charges a socket's receive
// buffer for a datagram of size bytes: its data rounded up to whole pages
// of a power-of-two allocation, plus the buffer head.
func DatagramTruesize(size int) int {
	alloc := 4096
	for alloc < size+skbOverhead {
		alloc *= 2
	}
	return alloc + skbOverhead
}

// handleAck records a receiver's progress on one of this node's streams.
func (e *Engine) handleAck(d *datagram.Datagram, now time.Time) {
	key := datagram.StreamKey{Instance: e.cfg.Instance, Group: d.Stream.Group, Class: d.Stream.Class}
	st, ok := e.senders[key]
	if !ok {
		e.m.Drop(metrics.DropUnknownStream)
		return
	}
	p, known := st.rx[d.Stream.Instance]
	if !known && len(st.rx) >= maxFlowReceivers {
		e.m.Drop(metrics.DropStreamLimit) // this receiver does not pace the stream
		return
	}
	if d.Edge > p.edge {
		p.edge = d.Edge
	}
	p.at = now
	if st.rx == nil {
		st.rx = map[datagram.InstanceID]rxProgress{}
	}
	delete(st.rx, datagram.InstanceID{}) // a real receiver replaces the start placeholder
	st.rx[d.Stream.Instance] = p
	// One pass over the receivers serves the window and the release.
	low, placeholder := scanReceivers(st, now)
	e.setBlocked(st, e.lagging(st, low))
	e.releaseAcked(st, low, placeholder)
}

// releaseAcked lets st's sender evict what every receiver pacing the stream
// has acknowledged (low, the lowest edge; beyond qos's RetainAcked newest).
// It does not while the start placeholder stands for receivers that have
// not ACKed yet, nor when the table of receivers is full and some receiver
// may not be counted.
func (e *Engine) releaseAcked(st *senderState, low uint64, placeholder bool) {
	if placeholder || len(st.rx) == 0 || len(st.rx) >= maxFlowReceivers {
		return
	}
	st.s.Acked(low, &e.out)
}

// checkWindow updates whether st blocks new publishes.
func (e *Engine) checkWindow(st *senderState, now time.Time) {
	low, _ := scanReceivers(st, now)
	e.setBlocked(st, e.lagging(st, low))
}

// setBlocked records whether st blocks new publishes.
func (e *Engine) setBlocked(st *senderState, blocked bool) {
	if blocked {
		e.blocked[st] = struct{}{}
	} else {
		delete(e.blocked, st)
	}
}

// scanReceivers drops st's receivers that have not ACKed for ackTimeout
// and returns the lowest edge of the others (math.MaxUint64 when none is
// left) and whether the start placeholder is among them.
func scanReceivers(st *senderState, now time.Time) (low uint64, placeholder bool) {
	low = math.MaxUint64
	for inst, p := range st.rx {
		if now.Sub(p.at) > ackTimeout {
			delete(st.rx, inst)
			continue
		}
		low = min(low, p.edge)
		placeholder = placeholder || inst == (datagram.InstanceID{})
	}
	return low, placeholder
}

// lagging reports whether st, a stream whose slowest active receiver has
// everything below low, has more datagrams in flight to it than the window
// allows.
func (e *Engine) lagging(st *senderState, low uint64) bool {
	if !st.s.Key().Class.Reliable() || low == math.MaxUint64 {
		return false
	}
	high := st.s.Highest()
	return high+1 > low && high+1-low > e.window
}

// recheckBlocked re-evaluates blocked senders (ACK timeouts) at tick.
func (e *Engine) recheckBlocked(now time.Time) {
	for st := range e.blocked {
		e.checkWindow(st, now)
	}
}

// forgetReceiver removes a departed instance from every sender's window.
func (e *Engine) forgetReceiver(inst datagram.InstanceID, now time.Time) {
	for _, st := range e.senders {
		if _, ok := st.rx[inst]; ok {
			delete(st.rx, inst)
			e.checkWindow(st, now)
		}
	}
}

// noteReliableData remembers a reliable stream that received DATA, so its
// progress is ACKed at the next flush.
func (e *Engine) noteReliableData(key datagram.StreamKey) {
	if _, ok := e.acks[key]; !ok {
		if len(e.acks) >= maxAckStreams {
			e.m.Drop(metrics.DropStreamLimit) // this stream is not ACKed (not paced)
			return
		}
		e.acks[key] = ackState{}
	}
	e.ackDirty = true
}

// ackReserve is what may still reach a socket client's queue once the ACKs
// are held, measured as the queue's byte bound counts (bodies plus
// rsbsocket.FrameOverhead per frame): the deliveries waiting (up to
// deliveryHighWater, measured so too) and what the senders have in flight,
// a window for each of two, whose records of at least minWireRecord bytes
// each become a frame.
func (e *Engine) ackReserve() int {
	inFlight := 2 * int(e.window) * e.cfg.MaxDatagram
	return deliveryHighWater + inFlight + inFlight/minWireRecord*rsbsocket.FrameOverhead
}

// sendAcks ACKs every tracked stream whose edge advanced by ackEvery
// datagrams or whose progress is older than ackInterval.
func (e *Engine) sendAcks(now time.Time, force bool) {
	if !e.ackDirty && !force {
		return
	}
	e.ackDirty = false
	if e.env.Sinks.Backlogged(e.ackReserve()) || e.dq.backlogged() {
		// A local client's queue, or the deliveries to the local sinks,
		// are at their high watermark: hold the ACKs so remote senders stop
		// at their window instead of overflowing it.
		e.ackDirty = true
		return
	}
	every := max(e.window/4, 1)
	for key, a := range e.acks {
		r := e.rcv.Lookup(key)
		if r == nil {
			delete(e.acks, key)
			continue
		}
		edge := r.Edge()
		if edge <= a.edge {
			continue
		}
		if edge-a.edge < every && now.Sub(a.at) < ackInterval && !force {
			e.ackDirty = true
			continue
		}
		e.acks[key] = ackState{edge: edge, at: now}
		// From the engine's free list: nothing holds an ACK once it is
		// transmitted, and handleOutput puts it back.
		d := e.free.datagram()
		d.Kind = datagram.KindAck
		d.Stream = datagram.StreamKey{Instance: e.cfg.Instance, Group: key.Group, Class: key.Class}
		d.Target, d.Edge = key.Instance, edge
		e.out.Datagrams = append(e.out.Datagrams, d)
	}
}
