package rsbsocket

import (
	"strings"

	"github.com/rsbd/rsbd/scope"
)

// routeIndex finds the connections whose interest matches an event's scope
// without looking at every connection: connections that want everything,
// and the others by each scope of their (minimal) interest, looked up along
// the event scope's super-scopes. It is immutable; the server swaps a new
// one in whenever a connection comes, goes or changes its interest.
type routeIndex struct {
	all []*conn
	by  map[scope.Scope][]*conn
	// depths has bit d set when an indexed scope has d components (bit
	// maxDepthBit: that many or more): a lookup skips the super-scopes at
	// depths nobody listens on, which with listeners at one depth leaves
	// one probe per event.
	depths uint64
}

// maxDepthBit is the depth bit shared by all deeper scopes.
const maxDepthBit = 63

// depthBit returns the depths bit of a scope with d components.
func depthBit(d int) uint64 { return 1 << min(d, maxDepthBit) }

// buildIndex indexes routes by their current interest.
func buildIndex(routes []*conn) *routeIndex {
	ix := &routeIndex{by: map[scope.Scope][]*conn{}}
	for _, c := range routes {
		in := c.match.Load().interest
		if in.All {
			ix.all = append(ix.all, c)
			continue
		}
		for _, s := range in.Scopes {
			ix.by[s] = append(ix.by[s], c)
			ix.depths |= depthBit(strings.Count(s.String(), "/") - 1)
		}
	}
	return ix
}

// appendTargets appends to dst the connections whose interest matches sc;
// supers is scratch space. A connection appears once: its interest scopes
// never contain one another, so at most one lies on sc's super-scope chain.
func (ix *routeIndex) appendTargets(dst []*conn, supers []scope.Scope, sc scope.Scope) ([]*conn, []scope.Scope) {
	dst = append(dst, ix.all...)
	if len(ix.by) == 0 {
		return dst, supers
	}
	supers = sc.AppendSuperScopes(supers[:0], true)
	for d, s := range supers { // supers[d] has d components
		if ix.depths&depthBit(d) != 0 {
			dst = append(dst, ix.by[s]...)
		}
	}
	return dst, supers
}
