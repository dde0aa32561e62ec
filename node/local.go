package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/node/engine"
	"github.com/rsbd/rsbd/node/sinks"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/scope"
)

// socketHandler connects the RSB socket server to the node.
type socketHandler struct{ n *Node }

// OnFrame runs on the client's reading goroutine after the server has
// forwarded the frame to the other local connections: it delivers to
// embedded subscriptions and queues the event for the network. A full
// publish queue blocks this client only (TCP back-pressure).
func (h socketHandler) OnFrame(_ rsbsocket.ConnID, f frame.Frame) {
	n := h.n
	n.m.EventsIn[metrics.PathSocket].Inc()
	n.m.BytesIn[metrics.PathSocket].Add(float64(len(f.Body)))
	n.scopes.published(f.Scope, len(f.Body))
	if isHello(f) {
		// The server has learnt the listener from this Hello: make it known
		// to the peers before reading on from this client. A run of Hellos
		// the server learnt at once needs one barrier.
		if g := n.sock.InterestGeneration(); g != n.helloGen.Load() {
			n.interestBarrier()
			n.helloGen.Store(g)
		}
	}
	if !n.sinks.Empty() { // else no decoder from the pool either
		n.deliverFrameSinks(f)
	}
	if n.interest().Len() == 0 {
		return // no peer: nothing goes to the network
	}
	p := engine.Request{Body: f.Body, Size: len(f.Body), Scope: f.Scope, Class: n.cfg.qosFor(f.Scope).Class()}
	if fragmentation.WholeSize(len(f.Body)) <= n.recordCapacity() {
		p.Record = wrapFrame(&f) // the engine's record without a copy of the body
	}
	n.enqueue(p)
}

// deliverFrameSinks hands a socket frame to the embedded subscriptions.
// A frame body is a buffer of its own that nobody modifies: events decoded
// from it may alias it.
func (n *Node) deliverFrameSinks(f frame.Frame) {
	dec := frameDecoders.Get().(*bodyDecoder)
	dec.dec.Hint(f.Scope)
	n.deliverSinks(f.Body, f.Scope, dec, nil, nil)
	dec.scratch = notification.Event{} // pin no frame body while pooled
	frameDecoders.Put(dec)
}

// OnInterestChanged re-derives the groups this host wants.
func (h socketHandler) OnInterestChanged() { h.n.signalInterest() }

// isHello reports whether f is an introspection Hello, which announces a
// participant (and so perhaps a listener) of the sending client.
func isHello(f frame.Frame) bool {
	return string(f.WireSchema) == rsbsocket.HelloWireSchema &&
		strings.HasPrefix(f.Scope.String(), rsbsocket.ParticipantsScope.String())
}

// enqueue hands a publish request to the engine, waiting while the queue is
// full unless the node stops.
func (n *Node) enqueue(p engine.Request) bool {
	return n.submit(context.Background(), p) == nil
}

// submit hands a publish request to the engine: directly when it is idle,
// else through its queue, waiting while the queue is full unless ctx ends
// or the node stops.
func (n *Node) submit(ctx context.Context, p engine.Request) error {
	if err := n.eng.Submit(ctx, p); err != nil {
		if errors.Is(err, engine.ErrStopped) {
			return ErrClosed
		}
		return err
	}
	return nil
}

// Publish sends an event from an embedded participant: to the local socket
// clients and subscriptions whose scope matches and to the network. ev must
// carry its scope and event id; Publish sets no timestamps.
//
// The event is serialized only for who needs it: whole for socket clients
// and small network events (wrapped as its own record), straight into its
// fragments for a large event no socket client wants (the payload is copied
// once), not at all for embedded subscriptions alone. Embedded
// subscriptions get ev itself, which they may keep: the caller must not
// change ev or its Data afterwards, and must not publish an event a
// WithoutRetention handler was given (its memory is reused).
func (n *Node) Publish(ctx context.Context, ev *notification.Event) error {
	_, err := n.publish(ctx, ev, nil)
	return err
}

// PublishDetached is Publish for an event whose memory (its Data and other
// slices) may still be the caller's. What goes to socket clients and the
// network is a copy the node makes anyway; embedded subscriptions, which
// get ev itself, get it only after detach(ev) gave ev memory of its own,
// and detach is called only when some subscription matches. kept reports
// whether a subscription got ev: when not, the caller may reuse ev and
// its memory once PublishDetached returns.
func (n *Node) PublishDetached(ctx context.Context, ev *notification.Event, detach func(*notification.Event)) (kept bool, err error) {
	return n.publish(ctx, ev, detach)
}

// publish is Publish, calling detach (when not nil) before embedded
// subscriptions get ev; kept reports whether they did.
func (n *Node) publish(ctx context.Context, ev *notification.Event, detach func(*notification.Event)) (kept bool, err error) {
	if err := notification.CheckEncodable(ev); err != nil {
		return false, fmt.Errorf("node: publish: %w", err)
	}
	select {
	case <-n.stop:
		return false, ErrClosed
	default:
	}
	sockWants := n.sock != nil && n.sock.Wanted(ev.Scope)
	network := n.interest().Len() > 0
	size := notification.NotificationSize(ev)
	p := engine.Request{Scope: ev.Scope, Size: size}
	if network && !sockWants && fragmentation.WholeSize(size) > n.recordCapacity() {
		frags, owner, err := fragmentation.SplitEvent(nil, ev, n.recordCapacity())
		if err != nil {
			return false, fmt.Errorf("node: publish: %w", err)
		}
		p.Frags, p.Owner = frags, owner
	} else if network || sockWants {
		record, body, owner := fragmentation.MarshalSized(&n.slabs, ev, size)
		p.Record, p.Body = record, body
		if sockWants {
			// Socket clients' queues share the record: its slab keeps
			// the hold and is never reused.
			n.sock.Deliver(body, ev.Scope, 0)
		} else {
			p.Owner = owner // only the sender streams read it
		}
	}
	n.m.EventsIn[metrics.PathLocal].Inc()
	n.m.BytesIn[metrics.PathLocal].Add(float64(size))
	n.scopes.published(ev.Scope, size)
	kept = n.deliverLocal(ev, detach)
	if !network {
		return kept, nil // no peer: nothing goes to the network
	}
	p.Class = n.cfg.qosFor(ev.Scope).Class()
	return kept, n.submit(ctx, p)
}

// deliverLocal hands a locally published ev to the embedded subscriptions
// matching its scope, after detach (when not nil) when there are any; it
// reports whether there were.
func (n *Node) deliverLocal(ev *notification.Event, detach func(*notification.Event)) bool {
	if n.sinks.Empty() {
		return false
	}
	var found [8]*sinks.Subscription
	subs := n.sinks.Matching(found[:0], ev.Scope)
	if len(subs) == 0 {
		return false
	}
	if detach != nil {
		detach(ev)
	}
	for _, s := range subs {
		s.Handle(ev)
	}
	return true
}

// recordCapacity is the largest record a DATA datagram carries.
func (n *Node) recordCapacity() int { return engine.RecordCapacity(n.cfg.MaxDatagram) }

// Subscribe registers fn for events on sc and its sub-scopes, local and
// remote. The returned function cancels the subscription. An event's
// fields may share memory with what it arrived in: its Data, and for a
// small event from a socket client its Scope too, keep that frame (a few
// hundred bytes) alive; a handler that keeps only the Scope of many events
// may keep scope.Clone of it instead.
func (n *Node) Subscribe(sc scope.Scope, fn Handler, opts ...SubscribeOption) (cancel func()) {
	id := n.sinks.Add(sc, fn, opts)
	n.confirmInterest(n.addInterest(sc))
	return func() {
		if n.sinks.Remove(sc, id) {
			n.signalInterest()
		}
	}
}

// deliverSinks calls the embedded subscriptions matching sc. ev is the
// decoded event when the caller has it; otherwise body is decoded once, and
// only if some subscription matches: by the delivering goroutine's decoder
// when dec is set (see bodyDecoder), else into a fresh copy. cache, when
// set, is the delivering goroutine's cache of the last scope's matches. A
// node without subscriptions (a daemon) returns at once, on every path.
func (n *Node) deliverSinks(body []byte, sc scope.Scope, dec *bodyDecoder, ev *notification.Event, cache *sinks.MatchCache) int {
	if n.sinks.Empty() {
		return 0
	}
	var found [8]*sinks.Subscription
	var subs []*sinks.Subscription
	if cache != nil {
		subs = cache.Matching(n.sinks, sc)
	} else {
		subs = n.sinks.Matching(found[:0], sc)
	}
	if len(subs) == 0 {
		return 0
	}
	if ev == nil {
		var err error
		if dec != nil && sinks.BorrowedOnly(subs) {
			ev, err = dec.borrowed(body)
		} else {
			ev, err = dec.decode(body)
		}
		if err != nil {
			n.m.Drop(metrics.DropDecodeError)
			return 0
		}
	}
	for _, s := range subs {
		s.Handle(ev)
	}
	return len(subs)
}

// deliverNetwork delivers an event received from the network to the local
// socket clients and subscriptions whose scope matches (hashed groups
// collide and carry sub-scopes, so the scope is checked again here). It
// runs on the delivering goroutine; stable says body outlives the call
// (socket clients' queues keep it), owned that it is a copy of its own
// (events decoded from it may alias it).
func (n *Node) deliverNetwork(body []byte, stable, owned bool) {
	if n.sock == nil {
		n.deliverEmbedded(body, owned)
		return
	}
	f, err := n.dq.frames.Parse(body)
	if err != nil {
		n.m.Drop(metrics.DropDecodeError)
		return
	}
	if len(f.SenderID) == 16 && n.mayRepeat(f.Scope) &&
		n.dq.recent.Seen(sinks.EventKey{Sender: [16]byte(f.SenderID), Seq: f.SequenceNumber}) {
		n.m.Drop(metrics.DropDuplicate)
		return
	}
	n.m.EventsIn[metrics.PathNetwork].Inc()
	n.m.BytesIn[metrics.PathNetwork].Add(float64(len(body)))
	if !stable {
		body, owned = n.dq.slabs.Clone(body), true
	}
	got := n.sock.DeliverTo(&n.dq.sockOut, body, f.Scope, 0)
	n.dq.bodies.alias = owned
	got += n.deliverSinks(body, f.Scope, &n.dq.bodies, nil, &n.dq.match)
	if got == 0 {
		// Deliver counts what it queued: a frame a full queue refused is
		// already counted as a slow-client drop.
		if !n.sock.Interest().Matches(f.Scope) {
			n.m.Drop(metrics.DropScopeMismatch)
		}
		return
	}
	n.m.EventsOut[metrics.PathLocal].Inc()
	n.scopes.delivered(f.Scope, len(body))
}

// deliverEmbedded is deliverNetwork for a node without socket clients: the
// event is decoded once, for the subscriptions, and matched by its scope.
//
// The event is decoded in place, into the delivering goroutine's scratch
// event. Unless every subscription it reaches borrows (WithoutRetention),
// which are done with it before the next decode and before the reader
// reuses its buffer, it then becomes an event of its own, its Data copied
// into the delivering goroutine's slabs when body lies in a reader's buffer
// (not owned).
func (n *Node) deliverEmbedded(body []byte, owned bool) {
	ev := &n.dq.bodies.scratch
	if err := n.dq.dec.DecodeAliasInto(ev, body); err != nil {
		n.m.Drop(metrics.DropDecodeError)
		return
	}
	subs := n.dq.match.Matching(n.sinks, ev.Scope)
	if !sinks.BorrowedOnly(subs) {
		kept := new(notification.Event) // may be retained: an event of its own
		*kept = *ev
		if !owned {
			kept.Data = n.dq.slabs.Clone(kept.Data)
		}
		ev = kept
	}
	n.deliverEvent(ev, len(body), subs)
}

// deliverEvent delivers a decoded network event of size bytes to subs, the
// embedded subscriptions matching its scope (from the delivering
// goroutine's match cache, looked up once for the decision whether the
// event may stay in a reused buffer and for the delivery).
func (n *Node) deliverEvent(ev *notification.Event, size int, subs []*sinks.Subscription) {
	if n.mayRepeat(ev.Scope) && n.dq.recent.Seen(sinks.EventKey{Sender: ev.ID.SenderID, Seq: ev.ID.SequenceNumber}) {
		n.m.Drop(metrics.DropDuplicate)
		return
	}
	n.m.EventsIn[metrics.PathNetwork].Inc()
	n.m.BytesIn[metrics.PathNetwork].Add(float64(size))
	if len(subs) == 0 {
		n.m.Drop(metrics.DropScopeMismatch)
		return
	}
	for _, s := range subs {
		s.Handle(ev)
	}
	n.m.EventsOut[metrics.PathLocal].Inc()
	n.scopes.delivered(ev.Scope, size)
}

// bodyDecoder decodes network bodies on the delivering goroutine with its
// Decoder: into an event whose Data aliases the body when the body is a
// copy of its own (alias), else into one aliasing a copy of the body in
// the delivering goroutine's slabs (small bodies) or copying the data out
// (large ones).
type bodyDecoder struct {
	dec   *notification.Decoder
	alias bool
	slabs *sinks.BodySlabs
	// scratch is the event borrowed decodes reuse.
	scratch notification.Event
}

// borrowed decodes body in place into the decoder's scratch event, for
// subscriptions that all borrow (WithoutRetention): the event is valid
// until the next decode and its Data until body is reused.
func (d *bodyDecoder) borrowed(body []byte) (*notification.Event, error) {
	if err := d.dec.DecodeAliasInto(&d.scratch, body); err != nil {
		return nil, err
	}
	return &d.scratch, nil
}

// frameDecoders decode socket frames for embedded subscriptions on the
// client readers' goroutines.
var frameDecoders = sync.Pool{New: func() any {
	return &bodyDecoder{dec: new(notification.Decoder), alias: true}
}}

// decode decodes body; a nil d decodes into a fresh copy.
func (d *bodyDecoder) decode(body []byte) (*notification.Event, error) {
	switch {
	case d == nil:
		return notification.Unmarshal(body)
	case d.alias:
		return d.dec.DecodeAlias(body)
	case d.slabs != nil && len(body) <= sinks.MaxSlabBody:
		return d.dec.DecodeAlias(d.slabs.Clone(body))
	}
	return d.dec.Decode(body)
}

// reportLoss surfaces an unrecoverable loss: metrics, log, OnLoss.
func (n *Node) reportLoss(l LossReport) {
	n.m.LossReports[lossLabel(l)].Inc()
	n.m.LostDatagrams[lossLabel(l)].Add(float64(l.Range.Len()))
	n.log.Warn("events lost", "sender", fmt.Sprintf("%x", l.Stream.Instance[:4]),
		"group", fmt.Sprintf("%x", l.Stream.Group[:4]), "class", l.Stream.Class,
		"first", l.Range.First, "last", l.Range.Last, "reason", l.Reason.String())
	if n.cfg.OnLoss != nil {
		n.cfg.OnLoss(l)
	}
	if sc, ok := n.wanted.ScopeOf(l.Stream.Group); ok {
		for _, fn := range n.sinks.LossHandlers(nil, sc) {
			fn(l)
		}
	}
}

// flushReliable gives reliable streams up to d to finish (engine.Flush).
func (n *Node) flushReliable(d time.Duration) { n.eng.Flush(d) }
