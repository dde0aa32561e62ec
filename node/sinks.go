package node

import (
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// Handler receives the events of an embedded subscription. It runs on a
// goroutine of the node and must not block: hand the event to a queue of
// your own. The event must not be modified; it may be retained.
type Handler func(ev *notification.Event)

// LossHandler is told of unrecoverable losses on a group that may have
// carried events of a subscription's scope. It runs on the engine goroutine
// and must not block.
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

// sinkTable holds the embedded subscriptions by scope. Reads are lock-free
// (an immutable snapshot behind an atomic pointer); writes copy the map.
type sinkTable struct {
	mu     sync.Mutex
	nextID uint64
	snap   atomic.Pointer[map[scope.Scope][]*subscription]
}

func newSinkTable() *sinkTable {
	t := &sinkTable{}
	empty := map[scope.Scope][]*subscription{}
	t.snap.Store(&empty)
	return t
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
	next := t.copyLocked()
	next[sc] = append(next[sc], s)
	t.snap.Store(&next)
	return s.id
}

// remove unregisters the subscription id on sc; it reports whether it existed.
func (t *sinkTable) remove(sc scope.Scope, id uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	next := t.copyLocked()
	subs := next[sc]
	for i, s := range subs {
		if s.id == id {
			rest := append(append([]*subscription(nil), subs[:i]...), subs[i+1:]...)
			if len(rest) == 0 {
				delete(next, sc)
			} else {
				next[sc] = rest
			}
			t.snap.Store(&next)
			return true
		}
	}
	return false
}

func (t *sinkTable) copyLocked() map[scope.Scope][]*subscription {
	cur := *t.snap.Load()
	next := make(map[scope.Scope][]*subscription, len(cur)+1)
	for k, v := range cur {
		next[k] = v
	}
	return next
}

// scopes returns the scopes that have at least one subscription.
func (t *sinkTable) scopes() []scope.Scope {
	cur := *t.snap.Load()
	out := make([]scope.Scope, 0, len(cur))
	for sc := range cur {
		out = append(out, sc)
	}
	return out
}

// lossHandlers appends the loss handlers of subscriptions inside sc.
func (t *sinkTable) lossHandlers(dst []LossHandler, sc scope.Scope) []LossHandler {
	for s, subs := range *t.snap.Load() {
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
	cur := *t.snap.Load()
	if len(cur) == 0 {
		return dst, supers
	}
	supers = sc.AppendSuperScopes(supers[:0], true)
	for _, s := range supers {
		dst = append(dst, cur[s]...)
	}
	return dst, supers
}
