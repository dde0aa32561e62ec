package main

import (
	"cmp"
	"slices"

	"github.com/rsbd/rsbd/introspection"
	"github.com/rsbd/rsbd/node"
)

// groups is the node's received and sent multicast groups for its status.
func groups(nd *node.Node) (received, sent []introspection.Group) {
	r, s := nd.Groups()
	return statusGroups(r), statusGroups(s)
}

func statusGroups(us []node.GroupUse) []introspection.Group {
	out := make([]introspection.Group, 0, len(us))
	for _, u := range us {
		out = append(out, introspection.Group{Address: u.Addr.String(), Scopes: u.Scopes})
	}
	return out
}

// scopeRates turns the node's counts by scope into the status's rows, with
// the rates since prev (the counts secs ago): the statusScopes busiest
// scopes by event rate, then by total, and one row summing the rest. It
// returns the counts to keep for the next status.
func scopeRates(counts []node.ScopeCount, prev map[string]node.ScopeCount, secs float64) ([]introspection.ScopeTraffic, map[string]node.ScopeCount) {
	next := make(map[string]node.ScopeCount, len(counts))
	rows := make([]introspection.ScopeTraffic, 0, len(counts))
	for _, c := range counts {
		next[c.Scope] = c
		p := prev[c.Scope]
		row := introspection.ScopeTraffic{Scope: c.Scope,
			PublishedEvents: c.PublishedEvents, PublishedBytes: c.PublishedBytes,
			DeliveredEvents: c.DeliveredEvents, DeliveredBytes: c.DeliveredBytes,
			PublishedEventRate: rate(c.PublishedEvents, p.PublishedEvents, secs),
			PublishedByteRate:  rate(c.PublishedBytes, p.PublishedBytes, secs),
			DeliveredEventRate: rate(c.DeliveredEvents, p.DeliveredEvents, secs),
			DeliveredByteRate:  rate(c.DeliveredBytes, p.DeliveredBytes, secs)}
		if row.Scope == "" {
			row.Scope = introspection.OtherScopes
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b introspection.ScopeTraffic) int {
		return cmp.Or(cmp.Compare(b.PublishedEventRate+b.DeliveredEventRate, a.PublishedEventRate+a.DeliveredEventRate),
			cmp.Compare(b.PublishedEvents+b.DeliveredEvents, a.PublishedEvents+a.DeliveredEvents),
			cmp.Compare(a.Scope, b.Scope))
	})
	return foldScopes(rows), next
}

// foldScopes keeps the first statusScopes rows other than the other row and
// sums the rest into the other row, which goes last.
func foldScopes(rows []introspection.ScopeTraffic) []introspection.ScopeTraffic {
	out := make([]introspection.ScopeTraffic, 0, min(len(rows), statusScopes+1))
	other := introspection.ScopeTraffic{Scope: introspection.OtherScopes}
	folded := false
	for _, r := range rows {
		if r.Scope != introspection.OtherScopes && len(out) < statusScopes {
			out = append(out, r)
			continue
		}
		folded = true
		other.PublishedEvents += r.PublishedEvents
		other.PublishedBytes += r.PublishedBytes
		other.PublishedEventRate += r.PublishedEventRate
		other.PublishedByteRate += r.PublishedByteRate
		other.DeliveredEvents += r.DeliveredEvents
		other.DeliveredBytes += r.DeliveredBytes
		other.DeliveredEventRate += r.DeliveredEventRate
		other.DeliveredByteRate += r.DeliveredByteRate
	}
	if folded {
		out = append(out, other)
	}
	return out
}

// rate is the rate of a counter that went from prev to cur in secs (0 for
// a counter that went back).
func rate(cur, prev uint64, secs float64) float64 {
	return float64(cur-min(prev, cur)) / secs
}
