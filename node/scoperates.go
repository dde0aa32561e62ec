package node

import (
	"hash/maphash"
	"sync/atomic"

	"github.com/rsbd/rsbd/scope"
)

// scopeTable counts the events and bytes local clients publish and the
// events the node delivers to them, by scope. It takes no lock: a scope
// claims a slot by its hash with one compare-and-swap, once, and every
// later event adds to the slot's counters. A scope that finds its slot and
// the next scopeProbes-1 taken by others counts in the other row.
type scopeTable struct {
	seed  maphash.Seed
	slots [scopeSlots]scopeSlot
	other scopeSlot
}

// scopeSlot is one scope's counters; key is its hash (0: free), name its
// scope, set right after the key.
type scopeSlot struct {
	key                     atomic.Uint64
	name                    atomic.Pointer[string]
	pubEvents, pubBytes     atomic.Uint64
	delivEvents, delivBytes atomic.Uint64
	_                       [16]byte // keeps neighbouring slots' hot counters apart
}

// ScopeCount is the traffic of one scope since the node started.
type ScopeCount struct {
	// Scope is the scope, "" for the row of the scopes the table had no
	// slot for.
	Scope string
	// Published counts the events and bytes local clients (socket and
	// embedded) published on the scope; Delivered those the node received
	// from peers and handed to local clients.
	PublishedEvents, PublishedBytes uint64
	DeliveredEvents, DeliveredBytes uint64
}

func newScopeTable() *scopeTable { return &scopeTable{seed: maphash.MakeSeed()} }

// slot returns the slot of sc, claiming a free one on first sight.
func (t *scopeTable) slot(sc scope.Scope) *scopeSlot {
	h := maphash.String(t.seed, sc.String()) | 1
	for i := range uint64(scopeProbes) {
		s := &t.slots[(h+i)%scopeSlots]
		k := s.key.Load()
		if k == h {
			return s
		}
		if k == 0 && s.key.CompareAndSwap(0, h) {
			name := scope.Clone(sc).String()
			s.name.Store(&name)
			return s
		}
		if s.key.Load() == h { // another goroutine claimed it for sc
			return s
		}
	}
	return &t.other
}

// published counts one event of size bytes a local client published on sc.
func (t *scopeTable) published(sc scope.Scope, size int) {
	s := t.slot(sc)
	s.pubEvents.Add(1)
	s.pubBytes.Add(uint64(size))
}

// delivered counts one event of size bytes delivered to local clients.
func (t *scopeTable) delivered(sc scope.Scope, size int) {
	s := t.slot(sc)
	s.delivEvents.Add(1)
	s.delivBytes.Add(uint64(size))
}

// counts returns the scopes counted so far, and the other row last when
// it counted anything.
func (t *scopeTable) counts() []ScopeCount {
	var out []ScopeCount
	for i := range t.slots {
		s := &t.slots[i]
		name := s.name.Load()
		if name == nil {
			continue // free, or claimed a moment ago
		}
		out = append(out, s.count(*name))
	}
	if c := t.other.count(""); c.PublishedEvents+c.DeliveredEvents > 0 {
		out = append(out, c)
	}
	return out
}

func (s *scopeSlot) count(name string) ScopeCount {
	return ScopeCount{Scope: name,
		PublishedEvents: s.pubEvents.Load(), PublishedBytes: s.pubBytes.Load(),
		DeliveredEvents: s.delivEvents.Load(), DeliveredBytes: s.delivBytes.Load()}
}

// ScopeCounts returns the events and bytes by scope that local clients
// published and that the node delivered to them, since it started: at most
// one row per slot of its bounded table and one row (Scope "") for the
// scopes beyond it.
func (n *Node) ScopeCounts() []ScopeCount { return n.scopes.counts() }
