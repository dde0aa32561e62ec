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
			got, _ := ix.appendTargets(nil, nil, sc)
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
