package rsbsocket

import (
	"strings"
	"sync/atomic"

	"github.com/rsbd/rsbd/scope"
)

// routeIndex finds the connections whose interest matches an event's scope
// without looking at every connection: connections that want everything,
// and the others by each scope of their (minimal) interest, looked up along
// the event scope's super-scopes. It is immutable; the server swaps a new
// one in whenever a connection comes, goes or changes its interest.
type routeIndex struct {
	// gen numbers the indexes of every server of the process, from 1
	// (indexGens): a reader remembers the targets of its last scope for
	// one gen (forwarding.route).
	gen uint64
	all []*conn
	// by holds the entries keyed by scope string, so that a lookup probes
	// a prefix of the event's scope as it stands.
	by map[string]routeEntry
	// depths has bit d set when an indexed scope has d components (bit
	// maxDepthBit: that many or more): a lookup skips the super-scopes at
	// depths nobody listens on, which with listeners at one depth leaves
	// one probe per event.
	depths uint64
}

// routeEntry is the connections listening on one scope: the first kept in
// the entry itself, so that the common scope with one listening connection
// costs a lookup no further memory access.
type routeEntry struct {
	first *conn
	rest  []*conn
}

// add notes c as listening on the entry's scope.
func (e *routeEntry) add(c *conn) {
	if e.first == nil {
		e.first = c
	} else {
		e.rest = append(e.rest, c)
	}
}

// indexGens counts the route indexes built by the process's servers.
var indexGens atomic.Uint64

// maxDepthBit is the depth bit shared by all deeper scopes.
const maxDepthBit = 63

// depthBit returns the depths bit of a scope with d components.
func depthBit(d int) uint64 { return 1 << min(d, maxDepthBit) }

// buildIndex indexes routes by their current interest, numbered after
// every index built before it.
func buildIndex(routes []*conn) *routeIndex {
	ix := &routeIndex{gen: indexGens.Add(1), by: map[string]routeEntry{}}
	for _, c := range routes {
		in := c.match.Load().interest
		if in.All {
			ix.all = append(ix.all, c)
			continue
		}
		for _, s := range in.Scopes {
			e := ix.by[s.String()]
			e.add(c)
			ix.by[s.String()] = e
			ix.depths |= depthBit(strings.Count(s.String(), "/") - 1)
		}
	}
	return ix
}

// appendTargets appends to dst the connections whose interest matches sc.
// A connection appears once: its interest scopes never contain one
// another, so at most one lies on sc's super-scope chain. It walks sc's
// string and probes the super-scope ending at each slash only at the
// depths somebody listens on, and stops past the deepest of them.
func (ix *routeIndex) appendTargets(dst []*conn, sc scope.Scope) []*conn {
	dst = append(dst, ix.all...)
	if len(ix.by) == 0 {
		return dst
	}
	s := sc.String()
	depths := ix.depths
	for i, d := 0, 0; i < len(s) && depths != 0; i++ {
		if s[i] != '/' {
			continue
		}
		// The prefix s[:i+1] has d components.
		bit := depthBit(d)
		if depths&bit != 0 {
			if e, ok := ix.by[s[:i+1]]; ok {
				dst = append(dst, e.first)
				dst = append(dst, e.rest...)
			}
			if d < maxDepthBit {
				depths &^= bit // the shared deepest bit stays for deeper prefixes
			}
		}
		d++
	}
	return dst
}
