package group

import (
	"fmt"
	"net/netip"
	"slices"
	"sync"

	"github.com/rsbd/rsbd/transport/datagram"
)

// LocalSet is the reference-counted set of groups this node wants. Every
// change of the set (not of a count alone) increments its version, which
// orders the states gossiped to peers. It is safe for concurrent use.
type LocalSet struct {
	max int

	mu      sync.Mutex
	refs    map[GroupID]int
	version uint64
	// sorted is the set in ascending order as of version sortedAt, kept by
	// Set (whose callers pass sorted ids), Add and Remove so that Snapshot
	// need not sort. Snapshot hands out copies: it is changed in place.
	sorted   []GroupID
	sortedAt uint64
	// history lists the changes of the set in version order, for Delta:
	// it covers every change after version historyFrom (bounded by
	// maxLocalHistory entries; the oldest versions go first).
	history     []localChange
	historyFrom uint64
}

// localChange is one group added to or removed from the set at a version.
type localChange struct {
	version uint64
	id      GroupID
	added   bool
}

// NewLocalSet returns an empty set at version 1 bounded by
// cfg.MaxGroupsPerPeer (defaults applied), or an error wrapping ErrConfig.
func NewLocalSet(cfg Config) (*LocalSet, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &LocalSet{
		max:     cfg.withDefaults().MaxGroupsPerPeer,
		refs:    make(map[GroupID]int),
		version: 1,
	}, nil
}

// Add takes a reference on group id. It reports whether the set changed (the
// group was new), or fails with ErrTooManyGroups when a new group would
// exceed the limit.
func (l *LocalSet) Add(id GroupID) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.refs[id]; n > 0 {
		l.refs[id] = n + 1
		return false, nil
	}
	if len(l.refs) >= l.max {
		return false, fmt.Errorf("%w: local set holds %d", ErrTooManyGroups, l.max)
	}
	l.refs[id] = 1
	l.version++
	l.record(localChange{version: l.version, id: id, added: true})
	l.keepSorted(l.version-1, func(s []GroupID) []GroupID {
		i, _ := slices.BinarySearchFunc(s, id, CompareIDs)
		return slices.Insert(s, i, id)
	})
	return true, nil
}

// Remove drops a reference on group id and reports whether the set changed
// (the last reference went). Removing a group not in the set does nothing.
func (l *LocalSet) Remove(id GroupID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.refs[id]
	switch {
	case n == 0:
		return false
	case n > 1:
		l.refs[id] = n - 1
		return false
	}
	delete(l.refs, id)
	l.version++
	l.record(localChange{version: l.version, id: id})
	l.keepSorted(l.version-1, func(s []GroupID) []GroupID {
		if i, ok := slices.BinarySearchFunc(s, id, CompareIDs); ok {
			return slices.Delete(s, i, i+1)
		}
		return s
	})
	return true
}

// Set replaces the whole set by ids, each with one reference (duplicates
// count once). It reports whether the set changed, or fails with
// ErrTooManyGroups and leaves the set as it was.
func (l *LocalSet) Set(ids []GroupID) (bool, error) {
	next := make(map[GroupID]int, len(ids))
	for _, id := range ids {
		next[id] = 1
	}
	if len(next) > l.max {
		return false, fmt.Errorf("%w: %d groups, limit %d", ErrTooManyGroups, len(next), l.max)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	same := len(next) == len(l.refs)
	for id := range next {
		if _, ok := l.refs[id]; !ok {
			same = false
			break
		}
	}
	if same {
		l.refs = next
		return false, nil
	}
	l.version++
	l.recordSet(next)
	l.refs = next
	// Sorting ids already in order (as the node passes them) is linear.
	l.sorted, l.sortedAt = SortGroups(slices.Clone(ids)), l.version
	return true, nil
}

// record appends c to the history, dropping its oldest versions past
// maxLocalHistory changes. Called with mu held.
func (l *LocalSet) record(c localChange) {
	l.history = append(l.history, c)
	if len(l.history) <= maxLocalHistory {
		return
	}
	// Drop whole versions: a delta from a version needs all its changes.
	cut := len(l.history) - maxLocalHistory
	for cut < len(l.history) && l.history[cut].version == l.history[cut-1].version {
		cut++
	}
	l.historyFrom = l.history[cut-1].version
	l.history = slices.Delete(l.history, 0, cut)
}

// recordSet records the changes from l.refs to next at the current
// version. Called with mu held, before l.refs is replaced.
func (l *LocalSet) recordSet(next map[GroupID]int) {
	for id := range l.refs {
		if _, ok := next[id]; !ok {
			l.record(localChange{version: l.version, id: id})
		}
	}
	for id := range next {
		if _, ok := l.refs[id]; !ok {
			l.record(localChange{version: l.version, id: id, added: true})
		}
	}
}

// Delta returns the change of the set from version base to version v (at
// most the current one): the groups added and removed, each ascending. It
// reports false when the history no longer reaches back to base or v is
// not a version in (base, current].
func (l *LocalSet) Delta(base, v uint64) (added, removed []GroupID, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if base < l.historyFrom || v <= base || v > l.version {
		return nil, nil, false
	}
	net := map[GroupID]bool{} // id -> added (true) or removed (false) since base
	for _, c := range l.history {
		if c.version <= base || c.version > v {
			continue
		}
		if was, ok := net[c.id]; ok && was != c.added {
			delete(net, c.id) // back where it was at base
			continue
		}
		net[c.id] = c.added
	}
	for id, a := range net {
		if a {
			added = append(added, id)
		} else {
			removed = append(removed, id)
		}
	}
	return SortGroups(added), SortGroups(removed), true
}

// keepSorted applies change to the sorted snapshot when it was current at
// version prev (the version before this change), so that Snapshot need
// not sort again after a single Add or Remove. Called with mu held.
func (l *LocalSet) keepSorted(prev uint64, change func([]GroupID) []GroupID) {
	if l.sortedAt != prev {
		return
	}
	l.sorted, l.sortedAt = change(l.sorted), l.version
}

// Contains reports whether group id is in the set.
func (l *LocalSet) Contains(id GroupID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refs[id] > 0
}

// Len returns the number of groups in the set.
func (l *LocalSet) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.refs)
}

// Version returns the current version of the set.
func (l *LocalSet) Version() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.version
}

// Snapshot returns the set as a PeerState for gossip: the current version and
// the groups in ascending order, with the given instance and data address.
func (l *LocalSet) Snapshot(instance datagram.InstanceID, addr netip.AddrPort) PeerState {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sortedAt != l.version {
		ids := make([]GroupID, 0, len(l.refs))
		for id := range l.refs {
			ids = append(ids, id)
		}
		l.sorted, l.sortedAt = SortGroups(ids), l.version
	}
	return PeerState{Version: l.version, Instance: instance, Addr: addr, Groups: slices.Clone(l.sorted)}
}
