package node

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// GroupUse is one multicast group address the node receives or sends on,
// with the scopes it serves there as far as the node knows them (hashed
// scopes share addresses; a sent group's scope is known when a local client
// published on it or below it).
type GroupUse struct {
	Addr   netip.AddrPort
	Scopes []string
}

// Groups returns the group addresses the node receives (joined, or in
// unicast mode wanted from its peers) and those its sender streams send on,
// each sorted by address. It reads the state the interest loop and the
// engine keep; nothing is counted per event for it.
func (n *Node) Groups() (received, sent []GroupUse) {
	recv := map[netip.AddrPort][]string{}
	n.interestMu.Lock()
	for a := range n.joined {
		recv[a] = nil
	}
	n.interestMu.Unlock()
	for _, id := range n.wanted.Groups() {
		sc, _ := n.wanted.ScopeOf(id)
		a := n.pool.Addr(id)
		if _, ok := recv[a]; ok || n.cfg.Unicast {
			recv[a] = appendScope(recv[a], sc.String())
		}
	}
	ids := n.eng.SendGroups(nil)
	byID := n.publishedGroupScopes()
	sendTo := map[netip.AddrPort][]string{}
	for _, id := range ids {
		a := n.pool.Addr(id)
		sendTo[a] = appendScope(sendTo[a], byID[id])
	}
	return groupUses(recv), groupUses(sendTo)
}

// publishedGroupScopes maps the groups of the scopes local clients
// published on, and of their super-scopes, to those scopes.
func (n *Node) publishedGroupScopes() map[datagram.GroupID]string {
	m := map[datagram.GroupID]string{}
	for _, c := range n.scopes.counts() {
		if c.Scope == "" || c.PublishedEvents == 0 {
			continue
		}
		sc, err := scope.Parse(c.Scope)
		if err != nil {
			continue
		}
		for _, s := range sc.SuperScopes(true) {
			m[group.ID(s)] = s.String()
		}
	}
	return m
}

// appendScope adds sc to scopes unless it is empty or there already.
func appendScope(scopes []string, sc string) []string {
	if sc == "" || slices.Contains(scopes, sc) {
		return scopes
	}
	return append(scopes, sc)
}

func groupUses(m map[netip.AddrPort][]string) []GroupUse {
	out := make([]GroupUse, 0, len(m))
	for a, scs := range m {
		slices.Sort(scs)
		out = append(out, GroupUse{Addr: a, Scopes: scs})
	}
	slices.SortFunc(out, func(x, y GroupUse) int { return cmp.Compare(x.Addr.String(), y.Addr.String()) })
	return out
}
