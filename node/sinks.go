package node

import (
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// Handler receives the events of an embedded subscription. Events from the
// network arrive in receive order (per sender and QoS class as the class
// orders them), one handler call at a time, on a goroutine of the node (a
// socket reader or the node's delivery goroutine) that holds no engine
// lock; local events arrive on the publisher's goroutine. A handler may
// publish (a reply is sent from its goroutine when it returns), subscribe
// and cancel. It should not block for long: it holds up the node's other
// network deliveries, and while it runs the node holds back its ACKs once
// deliveries pile up. A handler's publish waits like any other only when
// the flow window is full and the publish queue too. The event must not be
// modified; it may be retained.
type Handler func(ev *notification.Event)

// LossHandler is told of unrecoverable losses on a group that may have
// carried events of a subscription's scope. It runs like a Handler, in
// order with the events.
type LossHandler func(LossReport)

// SubscribeOption tunes a subscription.
type SubscribeOption func(*subscription)

// WithLoss asks for loss reports that may concern the subscription.
func WithLoss(fn LossHandler) SubscribeOption {
	return func(s *subscription) { s.loss = fn }
}

// subscription is one embedded sink.
type subscription struct {
	id    uint64
	scope scope.Scope
	fn    Handler
	loss  LossHandler
}

// sinkTable holds the embedded subscriptions by scope. Subscribing and
// cancelling cost O(subscriptions on that scope); delivery takes a read lock
// and looks up the event's scope and its super-scopes.
type sinkTable struct {
	mu     sync.RWMutex
	nextID uint64
	by     map[scope.Scope][]*subscription
	// gen counts changes (under mu), so that a matchCache sees them.
	gen atomic.Uint64
}

func newSinkTable() *sinkTable {
	return &sinkTable{by: map[scope.Scope][]*subscription{}}
}

// add registers fn on sc and returns the subscription id.
func (t *sinkTable) add(sc scope.Scope, fn Handler, opts []SubscribeOption) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.nextID++
	s := &subscription{id: t.nextID, scope: sc, fn: fn}
	for _, o := range opts {
		o(s)
	}
	// Copy on write per scope: a delivery may be iterating the old slice.
	t.by[sc] = append(append(make([]*subscription, 0, len(t.by[sc])+1), t.by[sc]...), s)
	t.gen.Add(1)
	return s.id
}

// remove unregisters the subscription id on sc; it reports whether it existed.
func (t *sinkTable) remove(sc scope.Scope, id uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	subs := t.by[sc]
	for i, s := range subs {
		if s.id == id {
			t.gen.Add(1)
			if len(subs) == 1 {
				delete(t.by, sc)
			} else {
				t.by[sc] = append(append(make([]*subscription, 0, len(subs)-1), subs[:i]...), subs[i+1:]...)
			}
			return true
		}
	}
	return false
}

// scopes returns the scopes that have at least one subscription.
func (t *sinkTable) scopes() []scope.Scope {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]scope.Scope, 0, len(t.by))
	for sc := range t.by {
		out = append(out, sc)
	}
	return out
}

// lossHandlers appends the loss handlers of subscriptions inside sc.
func (t *sinkTable) lossHandlers(dst []LossHandler, sc scope.Scope) []LossHandler {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for s, subs := range t.by {
		if !sc.Contains(s) {
			continue
		}
		for _, sub := range subs {
			if sub.loss != nil {
				dst = append(dst, sub.loss)
			}
		}
	}
	return dst
}

// matching appends to dst the subscriptions whose scope is sc or one of its
// super-scopes. supers is scratch space for the super-scopes of sc.
func (t *sinkTable) matching(dst []*subscription, supers []scope.Scope, sc scope.Scope) ([]*subscription, []scope.Scope) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if len(t.by) == 0 {
		return dst, supers
	}
	supers = sc.AppendSuperScopes(supers[:0], true)
	for _, s := range supers {
		dst = append(dst, t.by[s]...)
	}
	return dst, supers
}

// matchCache remembers the subscriptions matching the last scope delivered
// (network events mostly come in runs on one scope) until the table
// changes. It belongs to one goroutine.
type matchCache struct {
	valid  bool
	gen    uint64
	sc     scope.Scope
	subs   []*subscription
	supers []scope.Scope
}

// matching returns the subscriptions of t matching sc, like
// sinkTable.matching. The result is valid until the next call.
func (c *matchCache) matching(t *sinkTable, sc scope.Scope) []*subscription {
	if c.valid && c.sc == sc && c.gen == t.gen.Load() {
		return c.subs
	}
	// A change after reading gen makes the next call look again.
	c.gen = t.gen.Load()
	c.subs, c.supers = t.matching(c.subs[:0], c.supers, sc)
	c.sc, c.valid = sc, true
	return c.subs
}
