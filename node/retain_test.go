package node

import (
	"bytes"
	"context"
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/scope"
)

// retainSizes are the payload sizes of retainPayload: a few bytes, each
// size class of the receive slabs (bodies of minSlabBody to maxSlabBody),
// and several fragments.
var retainSizes = []int{5, 600, 900, 1500, 2500, 3900, 9000, 70000, 150000}

// retainPayload is the data of event seq: its size varies from a few bytes
// to several fragments, and every byte depends on seq.
func retainPayload(seq uint32) []byte {
	d := make([]byte, retainSizes[int(seq)%len(retainSizes)])
	for i := 0; i < len(d); i += 4 {
		var w [4]byte
		binary.LittleEndian.PutUint32(w[:], seq*2654435761+uint32(i))
		copy(d[i:], w[:])
	}
	return d
}

// sparseKeeper keeps every keepEvery-th event it receives (a handler that
// retains a few events whose slabs it shares with events it drops) and
// counts all of them.
type sparseKeeper struct {
	seen atomic.Int64
	mu   sync.Mutex
	kept []*notification.Event
}

const keepEvery = 7

func (k *sparseKeeper) handle(ev *notification.Event) {
	if k.seen.Add(1)%keepEvery == 0 {
		k.mu.Lock()
		k.kept = append(k.kept, ev)
		k.mu.Unlock()
	}
}

// TestRetainedEventsStayIntact keeps the events a subscription receives (a
// Handler may) and checks that their data still holds what was sent after
// all later datagrams arrived and the heap was collected: decoded events
// may alias received buffers only where nothing reuses them, and events
// sharing a slab with dropped ones must keep it.
func TestRetainedEventsStayIntact(t *testing.T) {
	for _, mode := range []string{"embedded", "socket", "sparse", "mixed"} {
		t.Run(mode, func(t *testing.T) {
			nodes := startNodes(t, 2, func(_ int, c *Config) {
				if mode != "socket" {
					c.SocketAddr = "off"
				}
			})
			a, b := nodes[0], nodes[1]
			var got collector
			var sparse sparseKeeper
			handle, events := got.handle, 600
			if mode == "sparse" {
				handle, events = sparse.handle, 3000
			}
			defer b.Subscribe(scope.MustParse("/keep/"), handle)()
			if mode == "mixed" {
				// A borrowing subscription beside the retaining one: the
				// events must still be copied for the latter.
				defer b.Subscribe(scope.MustParse("/keep/x/"), func(*notification.Event) {}, WithoutRetention())()
			}
			testutil.WaitFor(t, 10*time.Second, "interest gossiped", func() bool {
				return a.interest().Wanted(groupID("/keep/"))
			})
			for seq := range uint32(events) {
				if err := a.Publish(context.Background(), testutil.Event("/keep/x/", seq, retainPayload(seq))); err != nil {
					t.Fatal(err)
				}
			}
			testutil.WaitFor(t, 30*time.Second, "every event", func() bool {
				return got.len()+int(sparse.seen.Load()) == events
			})
			runtime.GC()
			got.mu.Lock()
			kept := got.evs
			got.mu.Unlock()
			if mode == "sparse" {
				sparse.mu.Lock()
				kept = sparse.kept
				sparse.mu.Unlock()
				if len(kept) != events/keepEvery {
					t.Fatalf("kept %d events, want %d", len(kept), events/keepEvery)
				}
			}
			checkRetained(t, kept, events)
		})
	}
}

// checkRetained checks that evs are distinct events of sequence numbers
// below n whose data is what retainPayload made.
func checkRetained(t *testing.T, evs []*notification.Event, n int) {
	t.Helper()
	seen := make([]bool, n)
	for i, ev := range evs {
		seq := ev.ID.SequenceNumber
		if int(seq) >= n || seen[seq] {
			t.Fatalf("event %d: unexpected or repeated sequence number %d", i, seq)
		}
		seen[seq] = true
		if want := retainPayload(seq); !bytes.Equal(ev.Data, want) {
			t.Fatalf("event %d (%d bytes) changed after delivery", seq, len(want))
		}
	}
}

// TestBorrowingSubscriptionsSeeEveryEvent: a node whose only subscription
// borrows (WithoutRetention) delivers whole receive batches from its
// reader's buffers; every event arrives once, in order, holding what was
// sent while the handler runs.
func TestBorrowingSubscriptionsSeeEveryEvent(t *testing.T) {
	nodes := startNodes(t, 2, func(_ int, c *Config) {
		c.SocketAddr = "off"
		c.QoS, c.ExplicitQoS = QoS{Reliable: true, Ordered: true}, true
	})
	a, b := nodes[0], nodes[1]
	const events = 3000
	var next atomic.Uint32
	var bad atomic.Int64
	defer b.Subscribe(scope.MustParse("/borrow/"), func(ev *notification.Event) {
		seq := ev.ID.SequenceNumber
		if seq != next.Load() || !bytes.Equal(ev.Data, retainPayload(seq)) {
			bad.Add(1)
		}
		next.Store(seq + 1)
	}, WithoutRetention())()
	if !b.sinks.Borrowing() || b.inlineLimit() != borrowInlineMax {
		t.Fatal("a node with only a borrowing subscription does not deliver inline from its buffers")
	}
	testutil.WaitFor(t, 10*time.Second, "interest gossiped", func() bool {
		return a.interest().Wanted(groupID("/borrow/"))
	})
	for seq := range uint32(events) {
		if err := a.Publish(context.Background(), testutil.Event("/borrow/x/", seq, retainPayload(seq))); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 30*time.Second, "every event", func() bool { return next.Load() == events })
	if bad.Load() != 0 {
		t.Fatalf("%d events out of order or with changed data", bad.Load())
	}
}

// TestBorrowedDeliveryAliasesTheBuffer: an event in a reader's buffer
// reaches borrowing subscriptions in place, and is copied out as soon as a
// subscription that may retain it matches too.
func TestBorrowedDeliveryAliasesTheBuffer(t *testing.T) {
	n := startNodes(t, 1, func(_ int, c *Config) { c.SocketAddr = "off" })[0]
	payload := bytes.Repeat([]byte{0xa5}, 900) // unlike its length prefix
	body := notification.AppendNotification(nil, testutil.Event("/borrow/x/", 1, payload))
	off := bytes.Index(body, payload)
	var data []byte
	var got *notification.Event
	defer n.Subscribe(scope.MustParse("/borrow/"), func(ev *notification.Event) { data, got = ev.Data, ev }, WithoutRetention())()
	n.deliverEmbedded(body, false)
	if len(data) != len(payload) || &data[0] != &body[off] || got != &n.dq.bodies.scratch {
		t.Fatal("a borrowing subscription got a copy")
	}
	// A socket frame, decoded on the client reader's decoder.
	dec := &bodyDecoder{dec: new(notification.Decoder), alias: true}
	if n.deliverSinks(body, scope.MustParse("/borrow/x/"), dec, nil, nil) != 1 || got != &dec.scratch || &data[0] != &body[off] {
		t.Fatal("a borrowing subscription got a socket frame's event as a copy")
	}
	cancel := n.Subscribe(scope.MustParse("/borrow/x/"), func(*notification.Event) {})
	if n.sinks.Borrowing() || n.inlineLimit() != inlineDeliverMax {
		t.Fatal("a retaining subscription left the node borrowing")
	}
	n.deliverEmbedded(body, false)
	if !bytes.Equal(data, payload) || &data[0] == &body[off] || got == &n.dq.bodies.scratch {
		t.Fatal("an event a subscription may retain was not copied out of the buffer")
	}
	if n.deliverSinks(body, scope.MustParse("/borrow/x/"), dec, nil, nil) != 2 || got == &dec.scratch {
		t.Fatal("a socket frame's event a subscription may retain is the decoder's scratch")
	}
	cancel()
	if !n.sinks.Borrowing() {
		t.Fatal("cancelling the retaining subscription left the node copying")
	}
	n.deliverEmbedded(body, true) // owned: aliased whatever the subscriptions
	if &data[0] != &body[off] {
		t.Fatal("an owned body was copied")
	}
	bad := []byte{0x0a, 0x02} // a truncated field: the scratch event stays
	n.dq.bodies.scratch.Data = payload
	n.deliverEmbedded(bad, false)
	if &n.dq.bodies.scratch.Data[0] != &payload[0] {
		t.Fatal("a body that does not decode changed the scratch event")
	}
}

// TestAckedDatagramsReleased: once its receiver has ACKed them, a sender
// keeps only qos's RetainAcked newest datagrams of a stream for repair,
// where it used to keep every one up to the count, byte and age bounds
// (3000 datagrams of 900 bytes here, within all three).
func TestAckedDatagramsReleased(t *testing.T) {
	nodes := startNodes(t, 2, func(_ int, c *Config) {
		c.SocketAddr = "off"
		c.MaxDatagram = DefaultLANDatagram // one 900-byte event per datagram
	})
	a, b := nodes[0], nodes[1]
	var seen atomic.Int64
	defer b.Subscribe(scope.MustParse("/acked/"), func(*notification.Event) { seen.Add(1) })()
	testutil.WaitFor(t, 10*time.Second, "interest gossiped", func() bool {
		return a.interest().Wanted(groupID("/acked/"))
	})
	const n = 3000
	for i := range n {
		if err := a.Publish(context.Background(), testutil.Event("/acked/", uint32(i), make([]byte, 900))); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 20*time.Second, "all events at B", func() bool { return seen.Load() == n })
	limit := qos.DefaultRetainAcked + int(a.eng.Window())
	testutil.WaitFor(t, 20*time.Second, "acknowledged datagrams released", func() bool {
		return retainedDatagrams(a) <= limit
	})
	if got := retainedDatagrams(a); got < qos.DefaultRetainAcked {
		t.Fatalf("%d datagrams retained, fewer than the %d acknowledged ones kept", got, qos.DefaultRetainAcked)
	}
}

// retainedDatagrams sums what n's sender streams keep for repair.
func retainedDatagrams(n *Node) int {
	return n.eng.Buffers().Retained
}
