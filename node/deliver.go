package node

import (
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/node/engine"
	"github.com/rsbd/rsbd/node/sinks"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/rsbpb"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/rsbsocket/frame"
)

// Network deliveries (events for the local sinks and loss reports) come
// from the engine's delivery queue (engine.Queue), which says who runs
// them when: a socket reader its own small batch, else the node's delivery
// goroutine. The delivering goroutine owns the deliverer.

// deliverer is the state of the delivering goroutine (one at a time; see
// engine.Queue).
type deliverer struct {
	recent sinks.RecentEvents
	// sockOut collects the socket clients the deliveries queued frames to.
	sockOut rsbsocket.DeliverBatch
	frames  frame.FrameParser // parses the bodies for socket clients
	dec     notification.Decoder
	// bodies decodes network bodies for embedded subscriptions with dec
	// and slabs; its scratch event is the one borrowed deliveries reuse.
	bodies bodyDecoder
	match  sinks.MatchCache
	// slabs takes the copies of bodies that leave a reader's buffer on
	// the delivering goroutine.
	slabs sinks.BodySlabs
}

// deliveryLoop is the delivery goroutine. It exits on stop. It writes the
// frames for socket clients after each chunk of the queue (deliverAll), so
// that their writes begin while a backlog is still being delivered and a
// client's send queue is handed a chunk's frames at a time.
func (n *Node) deliveryLoop() {
	q := n.eng.Deliveries()
	for {
		select {
		case <-n.stop:
			return
		case <-q.Wake():
		}
		for {
			c := q.Take()
			if c == nil {
				break
			}
			for c != nil {
				n.deliverAll(c.Deliveries, true)
				c = c.Recycle()
			}
			n.eng.FlushReplies()
		}
		n.eng.FlushReplies()
	}
}

// deliverAll runs ds in order and writes the frames it queued for socket
// clients. stable says the bodies outlive the call (otherwise they lie in
// a reader's buffer).
func (n *Node) deliverAll(ds []engine.Delivery, stable bool) {
	n.deliverRun(ds, stable)
	// The frames queued for socket clients are written now, on this
	// goroutine for a few idle connections.
	n.dq.sockOut.Flush()
}

// deliverRun runs ds in order, leaving the frames it queued for socket
// clients to the caller's flush.
func (n *Node) deliverRun(ds []engine.Delivery, stable bool) {
	for i := range ds {
		d := &ds[i]
		switch d.Kind {
		case engine.DeliverBody:
			n.deliverNetwork(d.Body, stable, d.Owned)
		case engine.DeliverMsg:
			n.deliverMessage(d.Msg, d.Size, d.Room)
		case engine.DeliverLoss:
			n.reportLoss(*d.Loss)
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
