package main

import (
	"fmt"
	"testing"

	"github.com/rsbd/rsbd/introspection"
	"github.com/rsbd/rsbd/node"
)

// TestScopeRates lists the busiest statusScopes scopes by rate since the
// previous counts and sums the others, with the node's own other row, in
// one row last.
func TestScopeRates(t *testing.T) {
	var counts []node.ScopeCount
	prev := map[string]node.ScopeCount{}
	for i := range statusScopes + 8 {
		sc := fmt.Sprintf("/s%02d/", i)
		// Scope i published i events in the last two seconds.
		counts = append(counts, node.ScopeCount{Scope: sc, PublishedEvents: uint64(100 + i), PublishedBytes: uint64(10 * (100 + i))})
		prev[sc] = node.ScopeCount{Scope: sc, PublishedEvents: 100, PublishedBytes: 1000}
	}
	counts = append(counts, node.ScopeCount{DeliveredEvents: 5})
	rows, next := scopeRates(counts, prev, 2)
	if len(rows) != statusScopes+1 || len(next) != len(counts) {
		t.Fatalf("%d rows, %d kept", len(rows), len(next))
	}
	top := rows[0]
	if top.Scope != fmt.Sprintf("/s%02d/", statusScopes+7) || top.PublishedEventRate != float64(statusScopes+7)/2 ||
		top.PublishedByteRate != float64(10*(statusScopes+7))/2 {
		t.Errorf("busiest %+v", top)
	}
	other := rows[len(rows)-1]
	// The other row: scopes 0..7 (0+1+...+7 = 28 events more) and the
	// node's own other row.
	if other.Scope != introspection.OtherScopes || other.PublishedEvents != 8*100+28 || other.PublishedEventRate != 14 ||
		other.DeliveredEvents != 5 {
		t.Errorf("other row %+v", other)
	}
}
