package interest

import (
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/scope"
)

// Linger holds the scopes the node gave up but still receives: peers keep
// sending on a scope until they learn that nobody here wants it, and
// dropping those events would lose them for the sinks still here. A scope
// lingers until every peer confirmed the state version that dropped it
// (then for a settling time) or until its deadline. Its owner serializes
// the transitions; Repeats may be called from any goroutine. The zero
// value holds nothing.
type Linger struct {
	m map[scope.Scope]lingerEntry
	// scopes is the lingering scopes for Repeats; nil when none.
	scopes atomic.Pointer[[]scope.Scope]
}

// lingerEntry is a scope given up but still received until the peers
// confirmed the state version that dropped it, or until the deadline.
type lingerEntry struct {
	until   time.Time
	version uint64
}

// Len returns the number of lingering scopes.
func (l *Linger) Len() int { return len(l.m) }

// Lingers reports whether sc itself lingers.
func (l *Linger) Lingers(sc scope.Scope) bool {
	_, ok := l.m[sc]
	return ok
}

// Scopes returns the lingering scopes, in no order.
func (l *Linger) Scopes() []scope.Scope {
	out := make([]scope.Scope, 0, len(l.m))
	for s := range l.m {
		out = append(out, s)
	}
	return out
}

// Narrow starts the linger, until the given deadline, of every scope of
// prev that cur no longer covers, and reports whether there was one.
func (l *Linger) Narrow(prev, cur []scope.Scope, until time.Time) bool {
	narrowed := false
	curSet := NewSet(cur)
	for _, s := range prev {
		if !curSet.Covers(s) {
			narrowed = true
			if l.m == nil {
				l.m = map[scope.Scope]lingerEntry{}
			}
			l.m[s] = lingerEntry{until: until}
		}
	}
	return narrowed
}

// Stamp gives the scopes that started to linger since the last Stamp the
// state version v that announced their loss.
func (l *Linger) Stamp(v uint64) {
	for s, e := range l.m {
		if e.version == 0 {
			e.version = v
			l.m[s] = e
		}
	}
}

// Settle ends, at settle, the linger of every scope whose loss every peer
// confirmed (a version up to v), unless it ends sooner.
func (l *Linger) Settle(v uint64, settle time.Time) {
	for s, e := range l.m {
		if e.version != 0 && e.version <= v && settle.Before(e.until) {
			e.until = settle
			l.m[s] = e
		}
	}
}

// Accepted forgets the scopes whose linger is over at now or that cur
// covers again, and returns what the node receives: cur followed by the
// lingering scopes (not minimized: a lingering scope may contain an
// announced one, and both groups must be received), and when the next
// linger ends (zero when none lingers).
func (l *Linger) Accepted(now time.Time, cur []scope.Scope) (all []scope.Scope, next time.Time) {
	all = append(make([]scope.Scope, 0, len(cur)+len(l.m)), cur...)
	for s, e := range l.m {
		if !e.until.After(now) || Covered(cur, s) {
			delete(l.m, s)
			continue
		}
		all = append(all, s)
		if next.IsZero() || e.until.Before(next) {
			next = e.until
		}
	}
	l.publish()
	return all, next
}

// publish stores the lingering scopes for Repeats.
func (l *Linger) publish() {
	if len(l.m) == 0 {
		l.scopes.Store(nil)
		return
	}
	l.scopes.Store(new(l.Scopes()))
}

// Repeats reports whether an event on sc may arrive twice: only while a
// scope containing it lingers is it received through two groups (the
// lingering scope's and the narrower one's), so only then need its event
// id be remembered and checked. It is safe for concurrent use.
func (l *Linger) Repeats(sc scope.Scope) bool {
	p := l.scopes.Load()
	if p == nil {
		return false
	}
	for _, s := range *p {
		if s.Contains(sc) {
			return true
		}
	}
	return false
}
