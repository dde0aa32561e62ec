package node

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// randomScope returns a scope of 0 to 5 components from a small alphabet,
// so that random scopes often contain one another.
func randomScope(r *rand.Rand) scope.Scope {
	var b strings.Builder
	b.WriteByte('/')
	for range r.IntN(6) {
		fmt.Fprintf(&b, "%c/", 'a'+r.IntN(3))
	}
	return scope.MustParse(b.String())
}

// linearMatching is the reference: every live subscription whose scope
// contains sc, super-scopes first, each scope's in the order added.
func linearMatching(live []*subscription, sc scope.Scope) []*subscription {
	var out []*subscription
	for _, s := range live {
		if s.scope.Contains(sc) {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b *subscription) int { return len(a.scope.String()) - len(b.scope.String()) })
	return out
}

// TestSinkTableMatchesLinearScan: through random subscribes and cancels the
// table's matches equal a linear scan over the live subscriptions, for
// random event scopes, and so do its scope list and the cache's answers.
func TestSinkTableMatchesLinearScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tab := newSinkTable()
	var cache matchCache
	var live []*subscription
	fn := func(*notification.Event) {}
	for step := range 3000 {
		if len(live) > 0 && r.IntN(5) < 2 {
			i := r.IntN(len(live))
			s := live[i]
			if !tab.remove(s.scope, s.id) {
				t.Fatalf("step %d: cancelling %d on %s failed", step, s.id, s.scope)
			}
			if tab.remove(s.scope, s.id) {
				t.Fatalf("step %d: cancelled %d twice", step, s.id)
			}
			live = slices.Delete(live, i, i+1)
		} else {
			sc := randomScope(r)
			id := tab.add(sc, fn, nil)
			live = append(live, &subscription{id: id, scope: sc})
		}
		for range 4 {
			sc := randomScope(r)
			want := linearMatching(live, sc)
			got := tab.matching(nil, sc)
			cached := cache.matching(tab, sc)
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
	if got := tab.scopes(); len(got) != len(distinct) {
		t.Fatalf("%d scopes listed, want %d", len(got), len(distinct))
	}
}

// TestSinkTableCancelFrees: cancelling every subscription of a large table
// empties it and shrinks its index back to the minimum, and the cancelled
// subscriptions are unlinked from everything still held.
func TestSinkTableCancelFrees(t *testing.T) {
	tab := newSinkTable()
	fn := func(*notification.Event) {}
	type sub struct {
		sc scope.Scope
		id uint64
	}
	var subs []sub
	for i := range 5000 {
		sc := scope.MustParse(fmt.Sprintf("/s/%d/", i%2500)) // two per scope
		subs = append(subs, sub{sc, tab.add(sc, fn, nil)})
	}
	if tab.idx.used != 2500 || len(tab.idx.slots) < 2500 {
		t.Fatalf("index holds %d scopes in %d slots, want 2500", tab.idx.used, len(tab.idx.slots))
	}
	if got := tab.matching(nil, scope.MustParse("/s/7/x/")); len(got) != 2 {
		t.Fatalf("%d matches for /s/7/x/, want 2", len(got))
	}
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(subs), func(i, j int) { subs[i], subs[j] = subs[j], subs[i] })
	for _, s := range subs {
		if !tab.remove(s.sc, s.id) {
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
	if len(tab.scopes()) != 0 {
		t.Fatal("scopes listed after cancelling all")
	}
}

// TestSinkTableDeepScopes: scopes deeper than maxIndexDepth share a depth
// count and still match exactly, however many of them lie on one event
// scope's chain.
func TestSinkTableDeepScopes(t *testing.T) {
	tab := newSinkTable()
	fn := func(*notification.Event) {}
	deep := "/" + strings.Repeat("d/", maxIndexDepth+5)
	deeper := deep + "e/f/"
	tab.add(scope.MustParse(deep), fn, nil)
	if got := tab.matching(nil, scope.MustParse(deeper)); len(got) != 1 {
		t.Fatalf("%d matches below the deep scope, want 1", len(got))
	}
	tab.add(scope.MustParse(deep+"e/"), fn, nil)
	tab.add(scope.MustParse("/d/"), fn, nil)
	if got := tab.matching(nil, scope.MustParse(deeper)); len(got) != 3 {
		t.Fatalf("%d matches below three scopes of its chain, want 3", len(got))
	}
	if got := tab.matching(nil, scope.MustParse("/"+strings.Repeat("d/", maxIndexDepth+1))); len(got) != 1 {
		t.Fatalf("%d matches above the deep scopes, want only /d/'s", len(got))
	}
}

// TestMinimalScopes: the result equals the quadratic definition (no scope
// contained in another, every input covered) on random lists.
func TestMinimalScopes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		in := make([]scope.Scope, r.IntN(30))
		for i := range in {
			in[i] = randomScope(r)
		}
		orig := slices.Clone(in)
		got := minimalScopes(in)
		for i, a := range got {
			for j, b := range got {
				if i != j && a.Contains(b) {
					t.Fatalf("%v: %s contains %s", orig, a, b)
				}
			}
		}
		for _, s := range orig {
			if !covered(got, s) || !newScopeSet(got).covers(s) {
				t.Fatalf("%v: %s not covered by %v", orig, s, got)
			}
		}
	}
}

// BenchmarkSinkMatching looks up the subscriptions of events round-robin
// over k subscribed scopes of one depth, as the delivery path does when its
// memory of the last scope misses. One op is one lookup.
func BenchmarkSinkMatching(b *testing.B) {
	for _, k := range []int{1, 10000} {
		b.Run(fmt.Sprintf("scopes=%d", k), func(b *testing.B) {
			tab := newSinkTable()
			scopes := make([]scope.Scope, k)
			for i := range scopes {
				scopes[i] = scope.MustParse(fmt.Sprintf("/bench/sc/%05d/%05d/", k, i))
				tab.add(scopes[i], func(*notification.Event) {}, nil)
			}
			var dst []*subscription
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if dst = tab.matching(dst[:0], scopes[i%k]); len(dst) != 1 {
					b.Fatalf("%d matches, want 1", len(dst))
				}
			}
		})
	}
}
