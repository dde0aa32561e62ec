package interest

import (
	"maps"
	"sync/atomic"

	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// WantedSet maps the groups local sinks want to their scopes, read
// lock-free by the socket readers and the engine. Writers (serialized by
// their owner) replace immutable maps: Store a whole new base, Add a group
// into a small extra map copied on each add and folded into the base once
// it holds about √n groups, so adding n groups one by one copies O(n√n)
// entries rather than O(n²). Its zero value wants nothing.
type WantedSet struct {
	p atomic.Pointer[wantedMaps]
}

// wantedMaps is one immutable version of the wanted set.
type wantedMaps struct {
	base, extra map[datagram.GroupID]scope.Scope
}

// Store makes scopes, whose group ids are ids (in the same order), the
// wanted set.
func (w *WantedSet) Store(scopes []scope.Scope, ids []datagram.GroupID) {
	m := make(map[datagram.GroupID]scope.Scope, len(scopes))
	for i, s := range scopes {
		m[ids[i]] = s
	}
	w.p.Store(&wantedMaps{base: m})
}

// Add adds group id of scope sc.
func (w *WantedSet) Add(id datagram.GroupID, sc scope.Scope) {
	cur := w.p.Load()
	if cur == nil {
		cur = &wantedMaps{}
	}
	if len(cur.extra)*len(cur.extra) >= len(cur.base)+wantedExtraMin*wantedExtraMin {
		m := make(map[datagram.GroupID]scope.Scope, len(cur.base)+len(cur.extra)+1)
		maps.Copy(m, cur.base)
		maps.Copy(m, cur.extra)
		m[id] = sc
		w.p.Store(&wantedMaps{base: m})
		return
	}
	extra := make(map[datagram.GroupID]scope.Scope, len(cur.extra)+1)
	maps.Copy(extra, cur.extra)
	extra[id] = sc
	w.p.Store(&wantedMaps{base: cur.base, extra: extra})
}

// Has reports whether group id is wanted.
func (w *WantedSet) Has(id datagram.GroupID) bool {
	_, ok := w.ScopeOf(id)
	return ok
}

// ScopeOf returns the wanted scope whose group is id.
func (w *WantedSet) ScopeOf(id datagram.GroupID) (scope.Scope, bool) {
	m := w.p.Load()
	if m == nil {
		return scope.Scope{}, false
	}
	if s, ok := m.extra[id]; ok {
		return s, true
	}
	s, ok := m.base[id]
	return s, ok
}

// Groups returns every wanted group id, in no order.
func (w *WantedSet) Groups() []datagram.GroupID {
	m := w.p.Load()
	if m == nil {
		return nil
	}
	ids := make([]datagram.GroupID, 0, len(m.base)+len(m.extra))
	for id := range m.base {
		ids = append(ids, id)
	}
	for id := range m.extra {
		if _, ok := m.base[id]; !ok {
			ids = append(ids, id)
		}
	}
	return ids
}
