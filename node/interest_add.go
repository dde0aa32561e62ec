package node

import (
	"slices"
	"strings"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/node/interest"
	"github.com/rsbd/rsbd/scope"
)

// The common change of the local interest is one new subscription: a
// scope that an announced one already covers (nothing changes), or a new
// scope beside the announced ones. addInterest applies those in O(depth +
// log n) plus copying, where updateInterest derives the whole interest
// again (O(n log n) with hashing, maps and sorts): subscribing n scopes one
// after the other would otherwise cost O(n²). Everything else (cancels,
// socket clients' interest, a new scope covering announced ones, lingering
// scopes, group id collisions) takes updateInterest.

// lastIndex indexes lastScopes for addInterest: the set for coverage
// checks and the scopes in string order, where the scopes a scope contains
// follow it as a run of strings it prefixes. updateInterest resets it; the
// first addInterest after builds it.
type lastIndex struct {
	ok     bool // the generations below are those of lastScopes
	built  bool // set and sorted reflect lastScopes
	set    interest.Set
	sorted []scope.Scope
	// sinkGen and sockGen are the generations of the subscriptions and of
	// the socket interest that lastScopes reflects: addInterest applies
	// only when the one change since is its own subscription.
	sinkGen, sockGen uint64
	// fast counts the subscriptions addInterest settled itself (for tests).
	fast uint64
}

// addResult is what tryAdd did.
type addResult int

const (
	addFallback addResult = iota // not a case for the fast path
	addCovered                   // already covered: nothing changes
	addApplied                   // sc announced and received
)

// addInterest is updateInterest after sc was subscribed, fast in the
// common cases. It reports whether the announced groups changed.
func (n *Node) addInterest(sc scope.Scope) bool {
	n.interestMu.Lock()
	r := n.tryAdd(sc)
	n.interestMu.Unlock()
	switch r {
	case addCovered:
		return false
	case addApplied:
		return true
	}
	return n.updateInterest()
}

// tryAdd applies the subscription of sc to the interest when that is
// exactly what updateInterest would do. Called with interestMu held.
func (n *Node) tryAdd(sc scope.Scope) addResult {
	x := &n.lastIdx
	if !x.ok || n.sinks.Gen() != x.sinkGen+1 || n.sockGeneration() != x.sockGen || n.linger.Len() > 0 {
		return addFallback
	}
	if !x.built {
		x.set, x.sorted, x.built = interest.NewSet(n.lastScopes), slices.Clone(n.lastScopes), true
		slices.SortFunc(x.sorted, compareScopes)
	}
	x.sinkGen++
	if x.set.Covers(sc) {
		x.fast++
		return addCovered
	}
	i, _ := slices.BinarySearchFunc(x.sorted, sc, compareScopes)
	if i < len(x.sorted) && strings.HasPrefix(x.sorted[i].String(), sc.String()) {
		x.ok = false // sc contains announced scopes: they give way to it
		return addFallback
	}
	id := group.ID(sc)
	j, found := slices.BinarySearchFunc(n.lastGroups, id, group.CompareIDs)
	if found {
		x.ok = false // a hash collision: leave it to the full derivation
		return addFallback
	}
	// Receive first (join), then announce, as updateInterest does: a peer
	// may send on the group as soon as it hears of it.
	n.wanted.Add(id, sc)
	if !n.cfg.Unicast {
		n.joinGroup(n.joined, id)
	}
	n.m.MulticastGroups.Set(float64(len(n.joined)))
	if err := n.mem.AddLocalGroup(id); err != nil {
		// The set is full: the full derivation logs it as well and leaves
		// what is received as derived, as here.
		x.ok = false
		return addFallback
	}
	n.lastScopes = append(n.lastScopes, sc)
	n.lastGroups = slices.Insert(n.lastGroups, j, id)
	x.set[sc] = struct{}{}
	x.sorted = slices.Insert(x.sorted, i, sc)
	x.fast++
	return addApplied
}

// sockGeneration is the socket interest's generation (0 without a socket
// server).
func (n *Node) sockGeneration() uint64 {
	if n.sock == nil {
		return 0
	}
	return n.sock.InterestGeneration()
}

func compareScopes(a, b scope.Scope) int { return strings.Compare(a.String(), b.String()) }
