package sinks

import (
	"hash/maphash"
	"strings"

	"github.com/rsbd/rsbd/scope"
)

// index maps scopes to the chains of their subscriptions: open
// addressing with linear probing over one array, keyed by a seeded hash of
// the scope string (the scope itself is the head Subscription's, so it is
// stored once). Deleting shifts later slots of the probe run back, so there
// are no tombstones; the array doubles above 3/4 load and halves below 1/8,
// which keeps inserting and deleting O(1) amortized. It is not safe for
// concurrent use: Table guards it.
type index struct {
	seed  maphash.Seed
	slots []slot // a power of two long
	used  int    // occupied slots: scopes with subscriptions
	// depths counts the subscribed scopes by depth (number of components),
	// the last entry those at maxIndexDepth or deeper: a lookup skips the
	// super-scopes at depths nobody subscribed.
	depths [maxIndexDepth + 1]int32
	// mask has bit d set while depths[d] is not zero: a lookup stops past
	// the deepest subscribed depth.
	mask uint32
}

// slot is one scope of the index; head is nil in an empty slot.
type slot struct {
	hash uint64 // of head.scope
	head *Subscription
}

func newIndex() index {
	return index{seed: maphash.MakeSeed(), slots: make([]slot, minIndexSlots)}
}

func (x *index) hash(s string) uint64 { return maphash.String(x.seed, s) }

// depthOf returns the depth counter of sc: its number of components,
// capped at maxIndexDepth.
func depthOf(sc scope.Scope) int {
	return min(strings.Count(sc.String(), "/")-1, maxIndexDepth)
}

// find returns the slot of scope s (hash h) and true, or the empty slot
// that ends its probe run and false. The index is never full.
func (x *index) find(s string, h uint64) (int, bool) {
	mask := len(x.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		sl := &x.slots[i]
		if sl.head == nil {
			return i, false
		}
		if sl.hash == h && sl.head.scope.String() == s {
			return i, true
		}
	}
}

// add appends s to the chain of its scope.
func (x *index) add(s *Subscription) {
	h := x.hash(s.scope.String())
	i, ok := x.find(s.scope.String(), h)
	if ok {
		last := x.slots[i].head
		for last.next != nil {
			last = last.next
		}
		last.next = s
		return
	}
	if (x.used+1)*4 > len(x.slots)*3 {
		x.resize(len(x.slots) * 2)
		i, _ = x.find(s.scope.String(), h)
	}
	x.slots[i] = slot{hash: h, head: s}
	x.used++
	d := depthOf(s.scope)
	x.depths[d]++
	x.mask |= 1 << d
}

// remove unlinks the Subscription id of scope sc and frees the scope's
// slot with its last Subscription; it returns the Subscription, or nil
// when id was not there.
func (x *index) remove(sc scope.Scope, id uint64) *Subscription {
	i, ok := x.find(sc.String(), x.hash(sc.String()))
	if !ok {
		return nil
	}
	var prev *Subscription
	for sub := x.slots[i].head; sub != nil; prev, sub = sub, sub.next {
		if sub.id != id {
			continue
		}
		if prev == nil {
			x.slots[i].head = sub.next
		} else {
			prev.next = sub.next
		}
		sub.next = nil
		if x.slots[i].head == nil {
			x.deleteSlot(i)
			x.used--
			d := depthOf(sc)
			if x.depths[d]--; x.depths[d] == 0 {
				x.mask &^= 1 << d
			}
			if len(x.slots) > minIndexSlots && x.used*8 < len(x.slots) {
				x.resize(len(x.slots) / 2)
			}
		}
		return sub
	}
	return nil
}

// deleteSlot empties slot i and moves back the later slots of its probe
// run whose home lies at or before the gap, so that every occupied slot
// stays reachable from its home without a gap in between.
func (x *index) deleteSlot(i int) {
	mask := len(x.slots) - 1
	for j := (i + 1) & mask; x.slots[j].head != nil; j = (j + 1) & mask {
		home := int(x.slots[j].hash) & mask
		// The slot stays when its home lies cyclically in (i, j].
		if i <= j {
			if i < home && home <= j {
				continue
			}
		} else if i < home || home <= j {
			continue
		}
		x.slots[i] = x.slots[j]
		i = j
	}
	x.slots[i] = slot{}
}

// resize rehashes the index into n slots (a power of two above used).
func (x *index) resize(n int) {
	old := x.slots
	x.slots = make([]slot, n)
	mask := n - 1
	for _, sl := range old {
		if sl.head == nil {
			continue
		}
		i := int(sl.hash) & mask
		for x.slots[i].head != nil {
			i = (i + 1) & mask
		}
		x.slots[i] = sl
	}
}

// matching appends the subscriptions of sc and its super-scopes, root
// first: one probe per super-scope at a subscribed depth, none past the
// deepest.
func (x *index) matching(dst []*Subscription, sc scope.Scope) []*Subscription {
	s := sc.String()
	mask := x.mask
	for i, d := 0, 0; i < len(s) && mask != 0; i++ {
		if s[i] != '/' {
			continue
		}
		// s[:i+1] is the super-scope at depth d.
		bit := uint32(1) << min(d, maxIndexDepth)
		if mask&bit != 0 {
			if j, ok := x.find(s[:i+1], x.hash(s[:i+1])); ok {
				for sub := x.slots[j].head; sub != nil; sub = sub.next {
					dst = append(dst, sub)
				}
			}
			if d < maxIndexDepth {
				mask &^= bit // the shared deepest bit stays for deeper prefixes
			}
		}
		d++
	}
	return dst
}
