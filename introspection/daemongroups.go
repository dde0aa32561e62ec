package introspection

import (
	"fmt"
	"strings"
)

// boundGroups bounds a daemon's group list and the scopes of each group.
func boundGroups(gs []Group) []Group {
	gs = gs[:min(len(gs), maxStatusScopes)]
	for i := range gs {
		gs[i].Scopes = gs[i].Scopes[:min(len(gs[i].Scopes), maxStatusScopes)]
	}
	return gs
}

// writeGroups prints a daemon's groups of one direction: each address with
// the scopes it serves.
func writeGroups(tw *treeWriter, title string, gs []Group) {
	tw.line("├─", fmt.Sprintf("%s (%d)", title, len(gs)))
	for i, g := range gs {
		node, _ := branch("│ ", i == len(gs)-1)
		tw.line(node, pad(g.Address, 24)+strings.Join(g.Scopes, " "))
	}
}

// writeScopes prints a daemon's traffic by scope: what its clients
// published and what it delivered to them, totals and rates.
func writeScopes(tw *treeWriter, ss []ScopeTraffic) {
	tw.line("├─", fmt.Sprintf("scopes (%d)", len(ss)))
	for i, s := range ss {
		node, _ := branch("│ ", i == len(ss)-1)
		tw.line(node, pad(s.Scope, 24)+fmt.Sprintf(
			"published %d events %d bytes %.1f ev/s %.1f B/s, delivered %d events %d bytes %.1f ev/s %.1f B/s",
			s.PublishedEvents, s.PublishedBytes, s.PublishedEventRate, s.PublishedByteRate,
			s.DeliveredEvents, s.DeliveredBytes, s.DeliveredEventRate, s.DeliveredByteRate))
	}
}
