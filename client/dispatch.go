package client

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/scope"
)

// dispatcher is the table of a socket link's local sinks. A few sinks
// (up to dispatchSmall) are also kept in an immutable list that lookups
// scan without a lock. Past that, an event's sinks are found in an index
// by sink scope: its scope and super-scopes are looked up, only at the
// depths where some sink listens, so a link with a thousand listeners on
// distinct scopes costs an event one lookup, not a thousand scope
// comparisons. Changes take the write lock, index lookups the read lock;
// sinks are given events after the lookup, so a sink may add or remove
// sinks from its deliver.
type dispatcher struct {
	mu sync.RWMutex
	by map[string][]sinkEntry // by scope string; in registration order within a scope
	// atDepth counts the indexed scopes with d components (the last
	// counter: that many or more).
	atDepth [dispatchDepths]int
	n       int // sinks in the index
	next    uint64
	// small is every sink, in registration order, while there are at most
	// dispatchSmall; nil when there are more.
	small atomic.Pointer[[]sinkEntry]
}

type sinkEntry struct {
	id uint64
	s  sink
}

// depthOf returns the depth counter of a scope with d components.
func depthOf(d int) int { return min(d, dispatchDepths-1) }

// components returns the number of components of sc (the root "/" has
// none).
func components(sc scope.Scope) int { return strings.Count(sc.String(), "/") - 1 }

// add registers s and returns the function removing it.
func (d *dispatcher) add(s sink) func() {
	sc := s.sinkScope()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.by == nil {
		d.by = map[string][]sinkEntry{}
	}
	d.next++
	id := d.next
	list := d.by[sc.String()]
	if len(list) == 0 {
		d.atDepth[depthOf(components(sc))]++
	}
	d.by[sc.String()] = append(list, sinkEntry{id: id, s: s})
	d.n++
	d.resmallLocked()
	return func() { d.remove(sc, id) }
}

// remove unregisters the sink id on sc; removing it again does nothing.
func (d *dispatcher) remove(sc scope.Scope, id uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	list := d.by[sc.String()]
	i := 0
	for i < len(list) && list[i].id != id {
		i++
	}
	switch {
	case i == len(list):
		return
	case len(list) == 1:
		delete(d.by, sc.String())
		d.atDepth[depthOf(components(sc))]--
	default:
		// A new array: a lookup that released the lock may still read
		// the old one.
		rest := make([]sinkEntry, 0, len(list)-1)
		d.by[sc.String()] = append(append(rest, list[:i]...), list[i+1:]...)
	}
	d.n--
	d.resmallLocked()
}

// resmallLocked rebuilds the list of few sinks, in registration order.
func (d *dispatcher) resmallLocked() {
	if d.n > dispatchSmall {
		d.small.Store(nil)
		return
	}
	all := make([]sinkEntry, 0, d.n)
	for _, list := range d.by {
		all = append(all, list...)
	}
	for i := 1; i < len(all); i++ { // a handful: insertion sort by id
		for j := i; j > 0 && all[j].id < all[j-1].id; j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	d.small.Store(&all)
}

// appendMatching appends to dst the sinks whose scope contains sc, each
// once; those on one scope come in the order they were added.
func (d *dispatcher) appendMatching(dst []sink, sc scope.Scope) []sink {
	if p := d.small.Load(); p != nil {
		for _, e := range *p {
			if e.s.sinkScope().Contains(sc) {
				dst = append(dst, e.s)
			}
		}
		return dst
	}
	return d.appendIndexed(dst, sc)
}

// appendIndexed is appendMatching through the index. The super-scopes of
// sc are the prefixes of its string that end in a slash.
func (d *dispatcher) appendIndexed(dst []sink, sc scope.Scope) []sink {
	str := sc.String()
	d.mu.RLock()
	defer d.mu.RUnlock()
	k := 0 // components of the prefix ending at i
	for i := 0; i < len(str); i++ {
		if str[i] != '/' {
			continue
		}
		if d.atDepth[depthOf(k)] != 0 {
			for _, e := range d.by[str[:i+1]] {
				dst = append(dst, e.s)
			}
		}
		k++
	}
	return dst
}

// deliverTo hands it to each of sinks; an owned event only to a sole sink.
func deliverTo(sinks []sink, it item) {
	if len(sinks) > 1 {
		it.own = nil
	}
	for _, s := range sinks {
		s.deliver(it)
	}
}

// borrower is a sink whose participant gives its events back for reuse
// (WithoutRetention).
type borrower interface{ borrows() bool }

// lentTo reports whether a received event for sinks is lent, and given
// back: when it goes to one sink alone that gives it back (several sinks
// each take a copy of it).
func lentTo(sinks []sink) bool {
	if len(sinks) == 1 {
		if b, ok := sinks[0].(borrower); ok && b.borrows() {
			return true
		}
	}
	return false
}
