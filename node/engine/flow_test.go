package engine

import (
	"testing"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// TestAckScanPacesAndReleases: one pass over a stream's receivers at each
// ACK decides both the flow window and what acknowledged datagrams the
// sender may evict. The start placeholder holds both until a receiver ACKs;
// the slowest active receiver blocks the stream past the window and keeps
// its datagrams; one silent past ackTimeout counts for neither.
func TestAckScanPacesAndReleases(t *testing.T) {
	e, _ := newTestEngine(t, func(c *Config) { c.Streams.Sender.RetainAcked = 2 })
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	key := datagram.StreamKey{Instance: e.cfg.Instance, Group: datagram.GroupID{7}, Class: datagram.ReliableOrdered}
	st := e.sender(key, now)
	n := int(e.window) + 10
	for range n {
		e.queueRecord(st, make([]byte, 100), nil, now)
		e.sendPending(st, now)
	}
	e.handleOutput(now)
	_, blocked := e.blocked[st]
	if !blocked || st.s.Retained() != n {
		t.Fatalf("before any ACK: blocked %v, retained %d of %d", blocked, st.s.Retained(), n)
	}
	ack := func(inst byte, edge uint64, at time.Time) {
		e.handleAck(&datagram.Datagram{Kind: datagram.KindAck, Edge: edge,
			Stream: datagram.StreamKey{Instance: datagram.InstanceID{inst}, Group: key.Group, Class: key.Class}}, at)
		e.handleOutput(at)
	}
	ack(1, uint64(n)+1, now) // A has everything
	if _, blocked := e.blocked[st]; blocked || st.s.Retained() != 2 {
		t.Fatalf("A has all: blocked %v, retained %d, want the 2 newest", blocked, st.s.Retained())
	}
	for range n {
		e.queueRecord(st, make([]byte, 100), nil, now)
		e.sendPending(st, now)
	}
	e.handleOutput(now)
	ack(2, uint64(n)+1, now) // B joins where A was: n more in flight to both
	if _, blocked := e.blocked[st]; !blocked || st.s.Retained() != n+2 {
		t.Fatalf("B behind: blocked %v, retained %d, want %d", blocked, st.s.Retained(), n+2)
	}
	later := now.Add(ackTimeout + time.Millisecond)
	ack(1, 2*uint64(n)+1, later) // B fell silent: A alone paces the stream
	if _, blocked := e.blocked[st]; blocked || len(st.rx) != 1 || st.s.Retained() != 2 {
		t.Fatalf("B silent: blocked %v, receivers %d, retained %d", blocked, len(st.rx), st.s.Retained())
	}
}

// TestFlowWindowFitsReorderHold: whatever the kernel grants, the window
// stays within half of what an ordered receiver with the same limits holds
// behind a hole, for every datagram size (the node's reorder defaults, 16
// MiB and 8192 datagrams, among the limits tried).
func TestFlowWindowFitsReorderHold(t *testing.T) {
	for _, size := range []int{1400, 9000, DefaultMaxDatagram} {
		for _, reorder := range []int{0, 1 << 20, 16 << 20} {
			for _, dgs := range []int{0, 8192} {
				for _, rcv := range []int{0, 8 << 20} {
					cfg := Config{MaxDatagram: size, RecvBuffer: rcv}
					cfg.Streams.Receivers.Receiver.ReorderBytes = reorder
					cfg.Streams.Receivers.Receiver.ReorderDatagrams = dgs
					hold := cfg.Streams.Receivers.Receiver.HeldDatagrams(size)
					if w := int(FlowWindow(cfg)); w > MinFlowWindow && w > hold/2 {
						t.Errorf("datagrams of %d bytes, reorder %d bytes and %d datagrams: window %d, hold %d", size, reorder, dgs, w, hold)
					}
					if w := int(FlowWindow(cfg)); rcv > 0 && w > MinFlowWindow && w*DatagramTruesize(size) > rcv/2 {
						t.Errorf("datagrams of %d bytes: window %d overfills half of a %d-byte buffer", size, w, rcv)
					}
				}
			}
		}
	}
	if got := DatagramTruesize(DefaultMaxDatagram); got < DefaultMaxDatagram || got > 2*DefaultMaxDatagram {
		t.Fatalf("truesize of %d bytes estimated as %d", DefaultMaxDatagram, got)
	}
}
