package sinks

import (
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/scope"
)

// Handler receives the events of an embedded Subscription. Events from the
// network arrive in receive order (per sender and QoS class as the class
// orders them), one handler call at a time, on a goroutine of the node (a
// socket reader or the node's delivery goroutine) that holds no engine
// lock; local events arrive on the publisher's goroutine. A handler may
// publish (a reply is sent from its goroutine when it returns), subscribe
// and cancel. It should not block for long: it holds up the node's other
// network deliveries, and while it runs the node holds back its ACKs once
// deliveries pile up. A handler's publish waits like any other only when
// the flow window is full and the publish queue too. The event must not be
// modified; it may be retained. A retained event's Data may share memory
// with the event's serialized form and, for events of 512 B to 4 KiB from
// the network, with other events: it keeps that buffer (less than 16 times
// the event's size) alive.
type Handler func(ev *notification.Event)

// LossHandler is told of unrecoverable losses on a group that may have
// carried events of a Subscription's scope. It runs like a Handler, in
// order with the events.
type LossHandler func(qos.LossReport)

// SubscribeOption tunes a Subscription.
type SubscribeOption func(*Subscription)

// WithLoss asks for loss reports that may concern the Subscription.
func WithLoss(fn LossHandler) SubscribeOption {
	return func(s *Subscription) { s.loss = fn }
}

// WithoutRetention declares that the handler keeps neither the event nor
// anything it shares memory with (its Data) once it returns, and does not
// publish them (it publishes a copy instead): the node may then hand it
// events whose memory is reused after the handler returns, which saves
// copying each event out of the receive buffer and allocating it. An event
// that also reaches a Subscription without this option is copied as usual.
func WithoutRetention() SubscribeOption {
	return func(s *Subscription) { s.borrow = true }
}

// Subscription is one embedded sink. Its fields but next never change
// after it is added, so a delivery may call fn after the table's lock is
// released.
type Subscription struct {
	id    uint64
	scope scope.Scope
	fn    Handler
	loss  LossHandler
	// borrow: fn keeps nothing of the event (WithoutRetention).
	borrow bool
	// next is the following Subscription on the same scope, in the order
	// they were added; it is guarded by the table's lock.
	next *Subscription
}

// Handle calls the subscription's handler with ev.
func (s *Subscription) Handle(ev *notification.Event) { s.fn(ev) }

// Borrows reports whether the subscription was made WithoutRetention.
func (s *Subscription) Borrows() bool { return s.borrow }

// Scope returns the scope the subscription listens on.
func (s *Subscription) Scope() scope.Scope { return s.scope }

// Table holds the embedded subscriptions by scope: an open-addressing
// index from the hash of a scope to the first of its subscriptions (a
// chain through Subscription.next). Subscribing and cancelling cost
// O(subscriptions on that scope), amortized over the index's growth and
// shrinking; a delivery takes a read lock and probes the index once for
// each super-scope of the event's scope at a depth where some scope is
// subscribed. The index is one array of two words per slot, so the
// collector's work per Subscription is its own object.
type Table struct {
	mu     sync.RWMutex
	nextID uint64
	idx    index
	// gen counts changes (under mu), so that a MatchCache sees them.
	gen atomic.Uint64
	// retainers counts the subscriptions without WithoutRetention.
	retainers atomic.Int64
	// count counts the subscriptions, so that a delivery to a table with
	// none (a daemon's) takes neither the lock nor a decoder.
	count atomic.Int64
}

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{idx: newIndex()}
}

// Gen returns the table's generation, which every Add and Remove advances:
// a caller that remembers it knows whether the subscriptions changed.
func (t *Table) Gen() uint64 { return t.gen.Load() }

// Add registers fn on sc and returns the Subscription id.
func (t *Table) Add(sc scope.Scope, fn Handler, opts []SubscribeOption) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.nextID++
	s := &Subscription{id: t.nextID, scope: sc, fn: fn}
	for _, o := range opts {
		o(s)
	}
	s.next = nil // an option must not link it
	t.idx.add(s)
	if !s.borrow {
		t.retainers.Add(1)
	}
	t.count.Add(1)
	t.gen.Add(1)
	return s.id
}

// Remove unregisters the Subscription id on sc; it reports whether it existed.
func (t *Table) Remove(sc scope.Scope, id uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.idx.remove(sc, id)
	if s == nil {
		return false
	}
	if !s.borrow {
		t.retainers.Add(-1)
	}
	t.count.Add(-1)
	t.gen.Add(1)
	return true
}

// Scopes returns the scopes that have at least one Subscription.
func (t *Table) Scopes() []scope.Scope {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]scope.Scope, 0, t.idx.used)
	for _, sl := range t.idx.slots {
		if sl.head != nil {
			out = append(out, sl.head.scope)
		}
	}
	return out
}

// Empty reports whether the table holds no Subscription.
func (t *Table) Empty() bool { return t.count.Load() == 0 }

// Borrowing reports whether every Subscription of the table borrows its
// events (WithoutRetention), so that no delivery needs a copy of its own.
func (t *Table) Borrowing() bool { return t.retainers.Load() == 0 }

// LossHandlers appends the loss handlers of subscriptions inside sc.
func (t *Table) LossHandlers(dst []LossHandler, sc scope.Scope) []LossHandler {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, sl := range t.idx.slots {
		if sl.head == nil || !sc.Contains(sl.head.scope) {
			continue
		}
		for sub := sl.head; sub != nil; sub = sub.next {
			if sub.loss != nil {
				dst = append(dst, sub.loss)
			}
		}
	}
	return dst
}

// matching appends to dst the subscriptions whose scope is sc or one of its
// super-scopes, super-scopes first, each scope's in the order they were
// added.
func (t *Table) Matching(dst []*Subscription, sc scope.Scope) []*Subscription {
	t.mu.RLock()
	dst = t.idx.matching(dst, sc)
	t.mu.RUnlock()
	return dst
}

// MatchCache remembers the subscriptions matching the last scope delivered
// (network events mostly come in runs on one scope) until the table
// changes. It belongs to one goroutine.
type MatchCache struct {
	valid bool
	gen   uint64
	sc    scope.Scope
	subs  []*Subscription
}

// BorrowedOnly reports whether every Subscription of subs borrows its
// events (WithoutRetention), so that an event for them may alias a buffer
// that is reused once they return.
func BorrowedOnly(subs []*Subscription) bool {
	for _, s := range subs {
		if !s.borrow {
			return false
		}
	}
	return true
}

// matching returns the subscriptions of t matching sc, like
// Table.matching. The result is valid until the next call.
func (c *MatchCache) Matching(t *Table, sc scope.Scope) []*Subscription {
	if c.valid && c.sc == sc && c.gen == t.gen.Load() {
		return c.subs
	}
	// A change after reading gen makes the next call look again.
	c.gen = t.gen.Load()
	c.subs = t.Matching(c.subs[:0], sc)
	c.sc, c.valid = sc, true
	return c.subs
}
