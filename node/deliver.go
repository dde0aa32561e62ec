package node

import (
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/rsbpb"
	"github.com/rsbd/rsbd/rsbsocket"
)

// Network deliveries (events for the local sinks and loss reports) never run
// while the engine is locked. An engine section collects them in receive
// order and, before it unlocks, appends them to the node's delivery queue;
// one goroutine at a time (the delivering one) runs the queue in order:
//
//   - a socket reader that handled its datagrams directly delivers them
//     itself when the queue is idle and empty (no copy, no hand-off: the
//     records still lie in the reader's buffer);
//   - everything else (batches the engine goroutine handled, a reader's
//     deliveries while another goroutine delivers) is delivered by the
//     node's delivery goroutine, which a reader also hands the queue to
//     when it finds more queued after its own.
//
// Nothing that holds the engine lock ever waits for a delivery, so a
// handler may publish, subscribe and cancel. The engine goroutine never
// delivers: a handler waiting for the publish queue cannot hold it up.

// deliveryKind says what a delivery carries.
type deliveryKind uint8

const (
	deliverBody deliveryKind = iota // a serialized Notification
	deliverMsg                      // a reassembled Notification
	deliverLoss                     // a loss report
)

// delivery is one unit of work for the local sinks.
type delivery struct {
	kind deliveryKind
	// owned says body is a copy of its own, which an event decoded from
	// it may alias (rather than a reader's buffer or a shared slab).
	owned bool
	body  []byte
	msg   *rsbpb.Notification
	// room is the buffer msg's Data lies in, with room around it
	// (fragmentation.Assembler.TakeRoom), or nil.
	room []byte
	loss *LossReport
	size int
}

// deliveryQueue orders deliveries between the goroutines that produce them
// (under the engine lock) and the one that runs them.
type deliveryQueue struct {
	mu    sync.Mutex
	items []delivery
	// bytes is what items will cost the socket clients' queues: their body
	// and message bytes and rsbsocket.FrameOverhead each.
	bytes  int
	active bool // a goroutine is delivering (owns the queue)
	// busy mirrors active for lock-free readers (Publish).
	busy atomic.Bool
	// queued mirrors bytes for lock-free readers (sendAcks).
	queued atomic.Int64
	wake   chan struct{}
	// recent, dec and match belong to the delivering goroutine.
	recent recentEvents
	// sockOut collects the socket clients the deliveries queued frames to;
	// it belongs to the delivering goroutine.
	sockOut rsbsocket.DeliverBatch
	frames  rsbsocket.FrameParser // parses the bodies for socket clients
	dec     notification.Decoder
	// bodies decodes network bodies for embedded subscriptions with dec
	// and slabs; its scratch event is the one borrowed deliveries reuse.
	bodies bodyDecoder
	match  matchCache
	// slabs takes the copies of bodies that leave a reader's buffer on
	// the delivering goroutine.
	slabs bodySlabs
}

func newDeliveryQueue() *deliveryQueue {
	q := &deliveryQueue{wake: make(chan struct{}, 1)}
	q.bodies = bodyDecoder{dec: &q.dec, slabs: &q.slabs}
	return q
}

// claim makes the caller the delivering goroutine if the queue is idle and
// empty. The engine lock is held, so nothing collected earlier is pending.
func (q *deliveryQueue) claim() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.active || len(q.items) > 0 {
		return false
	}
	q.active = true
	q.busy.Store(true)
	return true
}

// push appends ds and wakes the delivery goroutine if nobody delivers.
func (q *deliveryQueue) push(ds []delivery) {
	q.mu.Lock()
	q.items = append(q.items, ds...)
	for i := range ds {
		q.bytes += ds[i].size + rsbsocket.FrameOverhead
	}
	q.queued.Store(int64(q.bytes))
	wake := !q.active
	if wake {
		q.active = true
		q.busy.Store(true)
	}
	q.mu.Unlock()
	if wake {
		q.signal()
	}
}

func (q *deliveryQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// handOff is called by a reader that delivered its own deliveries: it
// gives the queue up, or to the delivery goroutine when more is queued.
func (q *deliveryQueue) handOff() {
	q.mu.Lock()
	more := len(q.items) > 0
	if !more {
		q.active = false
		q.busy.Store(false)
	}
	q.mu.Unlock()
	if more {
		q.signal()
	}
}

// take returns the queued deliveries, or nil after giving the queue up when
// nothing is queued. Only the delivering goroutine calls it; done is the
// slice the previous take returned, delivered: the queue reuses it.
func (q *deliveryQueue) take(done []delivery) []delivery {
	clear(done)
	if cap(done) > keepDeliveriesCap {
		done = nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		q.active = false
		q.busy.Store(false)
		if cap(done) > cap(q.items) {
			q.items = done[:0] // the list of the next burst
		}
		return nil
	}
	ds := q.items
	q.items = done[:0]
	q.bytes = 0
	q.queued.Store(0)
	return ds
}

// backlogged reports whether deliveries pile up past the high watermark:
// the engine then holds its ACKs so that remote senders stop at their
// window.
func (q *deliveryQueue) backlogged() bool {
	return q.queued.Load() > deliveryHighWater
}

// overLimit reports whether the queue holds more than deliveryMaxBytes;
// unreliable deliveries are dropped past it.
func (q *deliveryQueue) overLimit() bool {
	return q.queued.Load() > deliveryMaxBytes
}

// deliveryLoop is the delivery goroutine. It exits on stop.
func (n *Node) deliveryLoop() {
	var done []delivery
	for {
		select {
		case <-n.stop:
			return
		case <-n.dq.wake:
		}
		for {
			ds := n.dq.take(done)
			done = nil
			if ds == nil {
				break
			}
			n.deliverAll(ds, true)
			done = ds
			n.eng.flushReplies()
		}
		n.eng.flushReplies()
	}
}

// deliverAll runs ds in order. stable says the bodies outlive the call
// (otherwise they lie in a reader's buffer).
func (n *Node) deliverAll(ds []delivery, stable bool) {
	for i := range ds {
		d := &ds[i]
		switch d.kind {
		case deliverBody:
			n.deliverNetwork(d.body, stable, d.owned)
		case deliverMsg:
			n.deliverMessage(d.msg, d.size, d.room)
		case deliverLoss:
			n.reportLoss(*d.loss)
		}
	}
	// The frames queued for socket clients are written now, on this
	// goroutine for a few idle connections.
	n.dq.sockOut.Flush()
}

// deliverMessage delivers a reassembled event: straight from the message
// to embedded subscriptions, serialized again only for socket clients,
// around its data in its own buffer when room holds the other fields
// (frameAround). A buffer nobody keeps goes back to the assemblers.
func (n *Node) deliverMessage(m *rsbpb.Notification, size int, room []byte) {
	buf := room // what the assemblers allocated
	if buf == nil {
		buf = m.Data
	}
	if n.sock == nil {
		ev, err := notification.FromNotification(m)
		if err != nil {
			n.m.Drop(metrics.DropDecodeError)
			return
		}
		subs := n.dq.match.matching(n.sinks, ev.Scope)
		n.deliverEvent(ev, size, subs)
		if borrowedOnly(subs) {
			// Nobody kept the event: its buffer serves the next one.
			n.reasm.put(buf)
		}
		return
	}
	body := frameAround(m, room)
	if body == nil {
		var err error
		body, err = proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			n.m.Drop(metrics.DropDecodeError)
			return
		}
		// The frame is a copy: the reassembly buffer serves the next
		// event (the events decoded for embedded subscriptions alias
		// body, not m.Data).
		n.reasm.put(buf)
	}
	m.Data = nil
	n.deliverNetwork(body, true, true)
}

// inlineLimit is the most event bytes a socket reader delivers itself
// rather than through the delivery goroutine: inlineDeliverMax, or
// borrowInlineMax when no delivery needs a copy of its own (every
// subscription borrows and there is no socket client), so that the events
// are delivered from the reader's buffer without copying them out.
func (n *Node) inlineLimit() int {
	if n.sock == nil && n.sinks.borrowing() {
		return borrowInlineMax
	}
	return inlineDeliverMax
}

// stabilize copies the bodies of ds out of a reader's buffer into slabs
// that the decoded events may keep (their Data aliases them; see
// bodySlabs). Decoding is left to the delivering goroutine, off the engine
// lock.
func stabilize(ds []delivery, slabs *bodySlabs) {
	for i := range ds {
		if ds[i].kind == deliverBody {
			ds[i].body, ds[i].owned = slabs.clone(ds[i].body), true
		}
	}
}
