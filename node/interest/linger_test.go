package interest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// TestLingerSettlesOnConfirmation: a scope given up lingers until its
// deadline; a confirmation of an older version changes nothing, one of
// its own version ends the linger at the settling time; a scope covered
// again stops lingering at once.
func TestLingerSettlesOnConfirmation(t *testing.T) {
	var l Linger
	now := time.Unix(1_700_000_000, 0)
	a, b := scope.MustParse("/a/"), scope.MustParse("/b/")
	l.Narrow([]scope.Scope{a, b}, nil, now.Add(3*time.Second))
	l.Stamp(5)
	l.Settle(4, now.Add(250*time.Millisecond))
	all, next := l.Accepted(now.Add(time.Second), nil)
	if len(all) != 2 || !next.Equal(now.Add(3*time.Second)) {
		t.Fatalf("after an older confirmation: %v, next %v", all, next)
	}
	l.Settle(5, now.Add(1250*time.Millisecond))
	if all, next = l.Accepted(now.Add(time.Second), nil); len(all) != 2 || !next.Equal(now.Add(1250*time.Millisecond)) {
		t.Fatalf("settling: %v, next %v", all, next)
	}
	if all, _ = l.Accepted(now.Add(1300*time.Millisecond), nil); len(all) != 0 || l.Len() != 0 {
		t.Fatalf("settled: %v still received, %d lingering", all, l.Len())
	}
	l.Narrow([]scope.Scope{b}, nil, now.Add(time.Hour))
	cur := []scope.Scope{scope.Root}
	if all, next = l.Accepted(now, cur); !slices.Equal(all, cur) || !next.IsZero() || l.Lingers(b) {
		t.Fatalf("covered again: %v, next %v", all, next)
	}
}

// TestWantedSetAddFolds: groups added one by one are all wanted, with
// their scopes, across the folds of the extra map into the base; Store
// replaces everything.
func TestWantedSetAddFolds(t *testing.T) {
	var w WantedSet
	var ids []datagram.GroupID
	for i := range 1000 {
		sc := scope.MustParse(fmt.Sprintf("/w/s%d/", i))
		id := group.ID(sc)
		w.Add(id, sc)
		ids = append(ids, id)
		if got, ok := w.ScopeOf(id); !ok || got != sc {
			t.Fatalf("group %d: scope %v, %v", i, got, ok)
		}
	}
	for _, id := range ids {
		if !w.Has(id) {
			t.Fatalf("group %x lost in a fold", id)
		}
	}
	if got := len(w.Groups()); got != len(ids) {
		t.Fatalf("%d groups, want %d", got, len(ids))
	}
	w.Store([]scope.Scope{scope.Root}, []datagram.GroupID{group.ID(scope.Root)})
	if w.Has(ids[0]) || !w.Has(group.ID(scope.Root)) || len(w.Groups()) != 1 {
		t.Fatal("Store did not replace the set")
	}
}
