package rsbsocket

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/scope"
)

// TestRouteIndexMatchesLinearScan: the index, which probes only the depths
// somebody listens on, finds exactly the connections whose interest
// matches, for interests at mixed depths including past the shared deepest
// depth bit.
func TestRouteIndexMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randScope := func() scope.Scope {
		var b strings.Builder
		b.WriteString("/")
		depth := rng.IntN(5)
		if rng.IntN(10) == 0 {
			depth = maxDepthBit - 2 + rng.IntN(6) // around the shared bit
		}
		for range depth {
			fmt.Fprintf(&b, "%c/", 'a'+rng.IntN(3))
		}
		return scope.MustParse(b.String())
	}
	for round := range 200 {
		conns := make([]*conn, 1+rng.IntN(6))
		for i := range conns {
			c := &conn{id: ConnID(i)}
			var in Interest
			if rng.IntN(20) == 0 {
				in.All = true
			} else {
				var scopes []scope.Scope
				for range rng.IntN(4) {
					scopes = append(scopes, randScope())
				}
				in = Interest{Scopes: minimalScopes(scopes)}
			}
			c.match.Store(newMatcher(in))
			conns[i] = c
		}
		ix := buildIndex(conns)
		for range 50 {
			sc := randScope()
			got := ix.appendTargets(nil, sc)
			var want []*conn
			for _, c := range conns {
				if c.match.Load().interest.Matches(sc) {
					want = append(want, c)
				}
			}
			byID := func(a, b *conn) int { return int(a.id) - int(b.id) }
			slices.SortFunc(got, byID)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, scope %s: index found %d connections, a scan %d", round, sc, len(got), len(want))
			}
		}
	}
}

// TestRouteIndexDeepChain: connections listening at two depths past the
// shared deepest depth bit, and one near the root, on one event scope's
// chain are all found.
func TestRouteIndexDeepChain(t *testing.T) {
	deep := "/" + strings.Repeat("d/", maxDepthBit+1)
	var conns []*conn
	for i, s := range []string{deep, deep + "e/", "/d/"} {
		c := &conn{id: ConnID(i)}
		c.match.Store(newMatcher(Interest{Scopes: []scope.Scope{scope.MustParse(s)}}))
		conns = append(conns, c)
	}
	ix := buildIndex(conns)
	if got := ix.appendTargets(nil, scope.MustParse(deep+"e/f/")); len(got) != 3 {
		t.Fatalf("%d connections found below three scopes of the chain, want 3", len(got))
	}
	if got := ix.appendTargets(nil, scope.MustParse(deep)); len(got) != 2 {
		t.Fatalf("%d connections found on the deep scope, want 2", len(got))
	}
}

// BenchmarkRouteLookup looks up the targets of events round-robin over k
// scopes, each the interest of one of the connections (k listeners over
// one connection, or one each), as a publisher's reader does when its
// memory of the last scope misses. One op is one lookup.
func BenchmarkRouteLookup(b *testing.B) {
	for _, c := range []struct{ k, conns int }{{1, 1}, {1000, 1}, {1000, 1000}} {
		b.Run(fmt.Sprintf("scopes=%d/conns=%d", c.k, c.conns), func(b *testing.B) {
			scopes := make([]scope.Scope, c.k)
			interest := make([][]scope.Scope, c.conns)
			for i := range scopes {
				scopes[i] = scope.MustParse(fmt.Sprintf("/bench/li/%05d/%05d/", c.k, i))
				interest[i%c.conns] = append(interest[i%c.conns], scopes[i])
			}
			conns := []*conn{{id: 0}} // the publisher, which wants everything
			conns[0].match.Store(newMatcher(Interest{All: true}))
			for i, in := range interest {
				cn := &conn{id: ConnID(i + 1)}
				cn.match.Store(newMatcher(Interest{Scopes: minimalScopes(in)}))
				conns = append(conns, cn)
			}
			ix := buildIndex(conns)
			var dst []*conn
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				dst = ix.appendTargets(dst[:0], scopes[i%c.k])
				if len(dst) != 2 {
					b.Fatalf("%d targets, want 2", len(dst))
				}
			}
		})
	}
}
