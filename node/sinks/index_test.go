package sinks

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// linearMatching is the reference: every live Subscription whose scope
// contains sc, super-scopes first, each scope's in the order added.
func linearMatching(live []*Subscription, sc scope.Scope) []*Subscription {
	var out []*Subscription
	for _, s := range live {
		if s.scope.Contains(sc) {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b *Subscription) int { return len(a.scope.String()) - len(b.scope.String()) })
	return out
}

// TestSinkTableMatchesLinearScan: through random subscribes and cancels the
// table's matches equal a linear scan over the live subscriptions, for
// random event scopes, and so do its scope list and the cache's answers.
func TestSinkTableMatchesLinearScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tab := NewTable()
	var cache MatchCache
	var live []*Subscription
	fn := func(*notification.Event) {}
	for step := range 3000 {
		if len(live) > 0 && r.IntN(5) < 2 {
			i := r.IntN(len(live))
			s := live[i]
			if !tab.Remove(s.scope, s.id) {
				t.Fatalf("step %d: cancelling %d on %s failed", step, s.id, s.scope)
			}
			if tab.Remove(s.scope, s.id) {
				t.Fatalf("step %d: cancelled %d twice", step, s.id)
			}
			live = slices.Delete(live, i, i+1)
		} else {
			sc := testutil.RandomScope(r)
			id := tab.Add(sc, fn, nil)
			live = append(live, &Subscription{id: id, scope: sc})
		}
		for range 4 {
			sc := testutil.RandomScope(r)
			want := linearMatching(live, sc)
			got := tab.Matching(nil, sc)
			cached := cache.Matching(tab, sc)
			if len(got) != len(want) || len(cached) != len(want) {
				t.Fatalf("step %d, %s: %d matches, cache %d, want %d", step, sc, len(got), len(cached), len(want))
			}
			for i := range want {
				if got[i].id != want[i].id || cached[i].id != want[i].id {
					t.Fatalf("step %d, %s: match %d is %d (cache %d), want %d", step, sc, i, got[i].id, cached[i].id, want[i].id)
				}
			}
		}
	}
	distinct := map[scope.Scope]bool{}
	for _, s := range live {
		distinct[s.scope] = true
	}
	if got := tab.Scopes(); len(got) != len(distinct) {
		t.Fatalf("%d scopes listed, want %d", len(got), len(distinct))
	}
}

// TestSinkTableCancelFrees: cancelling every Subscription of a large table
// empties it and shrinks its index back to the minimum, and the cancelled
// subscriptions are unlinked from everything still held.
func TestSinkTableCancelFrees(t *testing.T) {
	tab := NewTable()
	fn := func(*notification.Event) {}
	type sub struct {
		sc scope.Scope
		id uint64
	}
	var subs []sub
	for i := range 5000 {
		sc := scope.MustParse(fmt.Sprintf("/s/%d/", i%2500)) // two per scope
		subs = append(subs, sub{sc, tab.Add(sc, fn, nil)})
	}
	if tab.idx.used != 2500 || len(tab.idx.slots) < 2500 {
		t.Fatalf("index holds %d scopes in %d slots, want 2500", tab.idx.used, len(tab.idx.slots))
	}
	if got := tab.Matching(nil, scope.MustParse("/s/7/x/")); len(got) != 2 {
		t.Fatalf("%d matches for /s/7/x/, want 2", len(got))
	}
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(subs), func(i, j int) { subs[i], subs[j] = subs[j], subs[i] })
	for _, s := range subs {
		if !tab.Remove(s.sc, s.id) {
			t.Fatalf("cancelling %d on %s failed", s.id, s.sc)
		}
	}
	if tab.idx.used != 0 || len(tab.idx.slots) != minIndexSlots {
		t.Fatalf("after cancelling all: %d scopes in %d slots, want 0 in %d", tab.idx.used, len(tab.idx.slots), minIndexSlots)
	}
	for d, n := range tab.idx.depths {
		if n != 0 {
			t.Fatalf("depth %d still counts %d scopes", d, n)
		}
	}
	if tab.idx.mask != 0 {
		t.Fatalf("depth mask %#x after cancelling all, want 0", tab.idx.mask)
	}
	for _, sl := range tab.idx.slots {
		if sl.head != nil {
			t.Fatalf("slot still holds %s", sl.head.scope)
		}
	}
	if len(tab.Scopes()) != 0 {
		t.Fatal("scopes listed after cancelling all")
	}
}

// TestSinkTableDeepScopes: scopes deeper than maxIndexDepth share a depth
// count and still match exactly, however many of them lie on one event
// scope's chain.
func TestSinkTableDeepScopes(t *testing.T) {
	tab := NewTable()
	fn := func(*notification.Event) {}
	deep := "/" + strings.Repeat("d/", maxIndexDepth+5)
	deeper := deep + "e/f/"
	tab.Add(scope.MustParse(deep), fn, nil)
	if got := tab.Matching(nil, scope.MustParse(deeper)); len(got) != 1 {
		t.Fatalf("%d matches below the deep scope, want 1", len(got))
	}
	tab.Add(scope.MustParse(deep+"e/"), fn, nil)
	tab.Add(scope.MustParse("/d/"), fn, nil)
	if got := tab.Matching(nil, scope.MustParse(deeper)); len(got) != 3 {
		t.Fatalf("%d matches below three scopes of its chain, want 3", len(got))
	}
	if got := tab.Matching(nil, scope.MustParse("/"+strings.Repeat("d/", maxIndexDepth+1))); len(got) != 1 {
		t.Fatalf("%d matches above the deep scopes, want only /d/'s", len(got))
	}
}

// BenchmarkSinkMatching looks up the subscriptions of events round-robin
// over k subscribed scopes of one depth, as the delivery path does when its
// memory of the last scope misses. One op is one lookup.
func BenchmarkSinkMatching(b *testing.B) {
	for _, k := range []int{1, 10000} {
		b.Run(fmt.Sprintf("scopes=%d", k), func(b *testing.B) {
			tab := NewTable()
			scopes := make([]scope.Scope, k)
			for i := range scopes {
				scopes[i] = scope.MustParse(fmt.Sprintf("/bench/sc/%05d/%05d/", k, i))
				tab.Add(scopes[i], func(*notification.Event) {}, nil)
			}
			var dst []*Subscription
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if dst = tab.Matching(dst[:0], scopes[i%k]); len(dst) != 1 {
					b.Fatalf("%d matches, want 1", len(dst))
				}
			}
		})
	}
}
