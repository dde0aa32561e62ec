package node

import (
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/node/sinks"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/rsbpb"
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

// deliveryLoop is the delivery goroutine. It exits on stop. It writes the
// frames for socket clients after each chunk of the queue (deliverAll), so
// that their writes begin while a backlog is still being delivered and a
// client's send queue is handed a chunk's frames at a time.
func (n *Node) deliveryLoop() {
	for {
		select {
		case <-n.stop:
			return
		case <-n.dq.wake:
		}
		for {
			c := n.dq.take()
			if c == nil {
				break
			}
			for c != nil {
				n.deliverAll(c.ds, true)
				c = recycle(c)
			}
			n.eng.flushReplies()
		}
		n.eng.flushReplies()
	}
}

// deliverAll runs ds in order and writes the frames it queued for socket
// clients. stable says the bodies outlive the call (otherwise they lie in
// a reader's buffer).
func (n *Node) deliverAll(ds []delivery, stable bool) {
	n.deliverRun(ds, stable)
	// The frames queued for socket clients are written now, on this
	// goroutine for a few idle connections.
	n.dq.sockOut.Flush()
}

// deliverRun runs ds in order, leaving the frames it queued for socket
// clients to the caller's flush.
func (n *Node) deliverRun(ds []delivery, stable bool) {
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
		subs := n.dq.match.Matching(n.sinks, ev.Scope)
		n.deliverEvent(ev, size, subs)
		if sinks.BorrowedOnly(subs) {
			// Nobody kept the event: its buffer serves the next one.
			n.reasm.Put(buf)
		}
		return
	}
	body := fragmentation.FrameAround(m, room, reasmHead)
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
		n.reasm.Put(buf)
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
	if n.sock == nil && n.sinks.Borrowing() {
		return borrowInlineMax
	}
	return inlineDeliverMax
}

// stabilize copies the bodies of ds out of a reader's buffer into slabs
// that the decoded events may keep (their Data aliases them; see
// sinks.BodySlabs). Decoding is left to the delivering goroutine, off the engine
// lock.
func stabilize(ds []delivery, slabs *sinks.BodySlabs) {
	for i := range ds {
		if ds[i].kind == deliverBody {
			ds[i].body, ds[i].owned = slabs.Clone(ds[i].body), true
		}
	}
}
