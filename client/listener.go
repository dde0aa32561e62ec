package client

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// Handler handles an event delivered to a Listener. A returned error is
// logged and counted; it does not stop the listener.
type Handler func(ev *Event) error

// ListenerStats counts what a Listener did.
type ListenerStats struct {
	// Queued counts events accepted into the queue (with
	// WithInlineDelivery: events passed to the handlers).
	Queued uint64
	// Dropped counts events lost to a full queue.
	Dropped uint64
	// DroppedForBytes counts the events of Dropped that the queue's byte
	// bound dropped (WithQueueBytes) rather than its size.
	DroppedForBytes uint64
	// Handled counts handler calls.
	Handled uint64
	// Errors counts handler calls that returned an error.
	Errors uint64
	// Panics counts handler calls that panicked (recovered).
	Panics uint64
}

// receiver is the receiving half shared by Listener and Reader: scope,
// filters and the bounded queue.
type receiver struct {
	bus     *Bus
	info    partInfo
	filters []Filter
	q       *queue
	// direct, when set, takes each event that passes the filters instead
	// of the queue (WithInlineDelivery).
	direct func(item)
	// quick is the queued Listener a socket link's reader may deliver to
	// itself while it is idle (quick.go); nil for other participants.
	quick quickTaker
	// borrow: the participant gives its events back (WithoutRetention).
	borrow bool
	// raw: payloads are not converted (WithoutConversion).
	raw bool
	// schemas remembers the converter of the last wire schema received.
	schemas lastConverter[string]
}

func (r *receiver) sinkScope() scope.Scope { return r.info.scope }

func (r *receiver) participant() partInfo { return r.info }

func (r *receiver) borrows() bool { return r.borrow }

func (r *receiver) deliver(it item) {
	if !passes(r.filters, it.ev) {
		return
	}
	if r.direct != nil {
		r.direct(it)
		return
	}
	r.q.push(it)
}

// deliverLater is deliver holding a queued event in p, for the socket
// link's reader.
func (r *receiver) deliverLater(it item, p *pushBatch) {
	if !passes(r.filters, it.ev) {
		return
	}
	if r.direct != nil {
		r.direct(it)
		return
	}
	p.add(r.q, r.quick, it)
}

// newReceiver builds the receiving half of a participant.
func (b *Bus) newReceiver(sc scope.Scope, kind string, o options) (*receiver, error) {
	if sc.IsZero() {
		return nil, fmt.Errorf("%w: zero scope", ErrConfig)
	}
	if err := o.checkQueue(); err != nil {
		return nil, err
	}
	return &receiver{
		bus:     b,
		info:    partInfo{kind: kind, id: notification.NewParticipantID(), scope: sc, always: o.announceReserved},
		filters: o.filters,
		q:       b.newQueue(o),
		borrow:  o.borrow && kind == KindListener,
		raw:     o.raw,
	}, nil
}

// event builds the participant's view of it (toEvent), its payload
// converted unless the participant takes it raw.
func (r *receiver) event(it item, borrow bool) *Event {
	reg := r.bus.reg
	if r.raw {
		reg = nil
	}
	return toEvent(reg, &r.schemas, it, borrow)
}

// handlerEntry is a handler with the id its remove function names.
type handlerEntry struct {
	id uint64
	h  Handler
}

// Listener calls its handlers for every event on its scope and sub-scopes
// that passes its filters, one event at a time in arrival order, on a
// goroutine of its own. Events wait in a bounded queue (WithQueue,
// WithQueueBytes). Over the socket protocol, an event that finds the
// listener idle (nothing queued, no handler running) while the connection
// has nothing more to read is handled by the connection's reader itself,
// without waking the listener's goroutine (BusStats.QuickDeliveries): a
// hand-off between goroutines is most of a round trip's cost in the
// client. Should the handlers run longer than QuickBudget, the listener's
// next events go through its queue for a while. Should they wait for a
// RemoteServer's reply or a Reader's event, or run past 10-20 ms
// (waiting for another listener's event, say), another goroutine goes on
// reading. With WithInlineDelivery the handlers always run on the
// delivering goroutine instead.
type Listener struct {
	r *receiver

	// turn is held by whoever runs handlers: the listener's goroutine, or
	// a socket link's reader delivering quickly (quick.go).
	turn quickTurn

	mu          sync.Mutex
	handlers    []handlerEntry
	nextHandler uint64
	snap        atomic.Pointer[[]Handler]

	life lifecycle

	handled, errs, panics atomic.Uint64
}

// NewListener creates a listener on sc (WithFilter, WithQueue, WithQueueBytes,
// WithInlineDelivery, WithoutRetention and WithoutConversion apply). It is announced before NewListener returns.
func (b *Bus) NewListener(sc scope.Scope, opts ...Option) (*Listener, error) {
	o := collect(opts)
	if o.inline {
		o.queueSize = 1 // never used; the queue only marks the listener closed
	}
	r, err := b.newReceiver(sc, KindListener, o)
	if err != nil {
		return nil, err
	}
	l := &Listener{r: r}
	l.snap.Store(&[]Handler{})
	if o.inline {
		r.direct = l.handleInline
	} else {
		r.quick = l
	}
	if err := l.life.open(b, r, l.r.q.close); err != nil {
		return nil, err
	}
	if !o.inline {
		go l.run()
	}
	return l, nil
}

// ID returns the listener's participant id.
func (l *Listener) ID() [16]byte { return l.r.info.id }

// Scope returns the listener's scope.
func (l *Listener) Scope() scope.Scope { return l.r.info.scope }

// AddHandler adds h and returns the function removing it again.
func (l *Listener) AddHandler(h Handler) (remove func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nextHandler++
	id := l.nextHandler
	l.handlers = append(l.handlers, handlerEntry{id: id, h: h})
	l.publishHandlers()
	return func() { l.removeHandler(id) }
}

func (l *Listener) removeHandler(id uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.handlers = slices.DeleteFunc(l.handlers, func(e handlerEntry) bool { return e.id == id })
	l.publishHandlers()
}

// publishHandlers stores a snapshot for the dispatch goroutine.
func (l *Listener) publishHandlers() {
	snap := make([]Handler, len(l.handlers))
	for i, e := range l.handlers {
		snap[i] = e.h
	}
	l.snap.Store(&snap)
}

// run dispatches queued events until the listener closes. It takes them
// from the queue up to eventBatch at a time, and a listener
// WithoutRetention gives them back a batch at a time.
func (l *Listener) run() {
	ctx := context.Background()
	var batch [eventBatch]item
	var back giveBacks
	defer back.flush()
	for {
		n, err := l.turn.next(ctx, l.r.q, batch[:])
		if err != nil {
			return
		}
		for i := range n {
			it := batch[i]
			batch[i] = item{}
			if l.r.q.isClosed() { // the rest of the batch is discarded
				if it.own != nil && l.r.borrow {
					back.add(it.own)
				}
				continue
			}
			ev := l.r.event(it, l.r.borrow)
			l.handle(ev)
			if l.r.borrow {
				back.add(ev)
			}
		}
		l.turn.mu.Unlock()
		back.flush()
	}
}

// handleInline calls the handlers on the delivering goroutine
// (WithInlineDelivery).
func (l *Listener) handleInline(it item) {
	if l.r.q.isClosed() {
		return
	}
	l.r.q.pushed.Add(1)
	ev := l.r.event(it, l.r.borrow)
	l.handle(ev)
	if l.r.borrow {
		giveBack(ev)
	}
}

// handle calls the handlers with ev, until the listener closes.
func (l *Listener) handle(ev *Event) {
	for _, h := range *l.snap.Load() {
		if l.r.q.isClosed() {
			return
		}
		l.call(h, ev)
	}
}

// call runs one handler, containing its error or panic.
func (l *Listener) call(h Handler, ev *Event) {
	l.handled.Add(1)
	defer func() {
		if p := recover(); p != nil {
			l.panics.Add(1)
			l.r.bus.log.Error("client: listener handler panicked", "scope", l.r.info.scope.String(),
				"event", ev.ID.String(), "panic", fmt.Sprint(p))
		}
	}()
	if err := h(ev); err != nil {
		l.errs.Add(1)
		l.r.bus.log.LogAttrs(context.Background(), slog.LevelWarn, "client: listener handler failed",
			slog.String("scope", l.r.info.scope.String()), slog.String("event", ev.ID.String()), slog.Any("err", err))
	}
}

// Stats returns the listener's counters.
func (l *Listener) Stats() ListenerStats {
	return ListenerStats{
		Queued: l.r.q.pushed.Load(), Dropped: l.r.q.dropped.Load(), DroppedForBytes: l.r.q.droppedBytes.Load(),
		Handled: l.handled.Load(), Errors: l.errs.Load(), Panics: l.panics.Load(),
	}
}

// Close stops delivery and retires the listener (introspection Bye).
// Queued events are discarded; no handler call starts after Close returns
// except, at most, the one the dispatch goroutine is about to make. Close
// does not wait for a running handler, so a handler may call it. It is
// idempotent.
func (l *Listener) Close() error {
	l.life.close()
	return nil
}
