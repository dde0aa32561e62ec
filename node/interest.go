package node

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/node/interest"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

// wantsGroup reports whether a local sink wants the group.
func (n *Node) wantsGroup(id datagram.GroupID) bool { return n.wanted.Has(id) }

// signalInterest asks the interest loop to re-derive the wanted groups
// (coalesced: a pending signal absorbs later ones).
func (n *Node) signalInterest() {
	select {
	case n.interestSig <- struct{}{}:
	default:
	}
}

// localScopes returns the minimal set of scopes local sinks want.
func (n *Node) localScopes() []scope.Scope {
	var all []scope.Scope
	if n.sock != nil {
		in := n.sock.Interest()
		if in.All {
			return []scope.Scope{scope.Root}
		}
		all = append(all, in.Scopes...)
	}
	all = append(all, n.sinks.Scopes()...)
	return interest.Minimal(all)
}

// interestLoop owns the local interest: it tells peers which groups this
// host wants and joins their multicast addresses. It exits on stop.
func (n *Node) interestLoop() {
	for {
		select {
		case <-n.stop:
			return
		case <-n.interestSig:
		}
		n.updateInterest()
	}
}

// updateInterest re-derives the wanted groups from the local sinks, tells
// peers and joins or leaves multicast addresses. It reports whether the
// announced set of groups changed. Callers are serialized by interestMu.
//
// Widening applies at once. Narrowing is announced at once too, but the
// scopes given up are still received (they linger) until every peer has
// confirmed the narrower state, or for InterestLinger at most: peers keep
// sending on them until they learn the change, and dropping those events
// would lose them for the sinks that are still here. (A fresh socket client
// wants everything until its first Hello, so every connect narrows the
// interest again a moment later.)
func (n *Node) updateInterest() bool {
	n.interestMu.Lock()
	defer n.interestMu.Unlock()
	now := time.Now()
	// The generations first: a change racing with the derivation makes the
	// next addInterest take this path again.
	n.lastIdx = lastIndex{ok: true, sinkGen: n.sinks.Gen(), sockGen: n.sockGeneration(), fast: n.lastIdx.fast}
	cur := n.localScopes() // minimal already
	narrowed := n.linger.Narrow(n.lastScopes, cur, now.Add(n.cfg.InterestLinger))
	n.lastScopes = cur
	// Receive (join) first, announce second: a peer may send on a new group
	// as soon as it hears of it.
	ids := group.SortGroups(slices.Clone(n.applyAccepted(now, cur)))
	changed := !slices.Equal(ids, n.lastGroups)
	n.lastGroups = ids
	if err := n.mem.SetLocalGroups(ids); err != nil {
		n.log.Error("cannot announce interest", "groups", len(ids), "err", err)
	}
	if narrowed {
		v := n.mem.LocalVersion()
		n.linger.Stamp(v)
		go n.confirmNarrowing(v)
	}
	return changed
}

// applyAccepted sets what the node receives: the announced scopes and the
// lingering ones; it arms a timer for the next linger to expire. It returns
// the group ids of cur, in the order of cur, for the announcement.
func (n *Node) applyAccepted(now time.Time, cur []scope.Scope) []datagram.GroupID {
	accepted, next := n.linger.Accepted(now, cur)
	if !next.IsZero() {
		time.AfterFunc(next.Sub(now), n.signalInterest)
	}
	n.m.LingeringScopes.Set(float64(n.linger.Len()))
	ids := interest.GroupIDs(accepted) // cur's first, as accepted lists them
	n.wanted.Store(accepted, ids)
	if !n.cfg.Unicast {
		n.updateJoins(n.joined, ids)
	}
	n.m.MulticastGroups.Set(float64(len(n.joined)))
	return ids[:len(cur)]
}

// mayRepeat reports whether an event on sc may arrive twice: only while a
// scope containing it lingers is it received through two groups (the
// lingering scope's and the narrower one's), so only then are its event ids
// remembered and checked.
func (n *Node) mayRepeat(sc scope.Scope) bool { return n.linger.Repeats(sc) }

// confirmNarrowing pushes the narrower state of version v to the peers and,
// once all confirmed it, stops receiving the scopes it gave up lingerSettle
// later.
func (n *Node) confirmNarrowing(v uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.InterestLinger)
	defer cancel()
	if _, err := n.mem.PushLocal(ctx); err != nil {
		return // the lingering scopes expire on their own
	}
	n.confirmed.Store(max(n.confirmed.Load(), v))
	// Datagrams the peers sent before they applied the change may still be
	// in flight or under repair: keep receiving for lingerSettle more.
	n.interestMu.Lock()
	n.linger.Settle(v, time.Now().Add(lingerSettle))
	n.applyAccepted(time.Now(), n.lastScopes)
	n.interestMu.Unlock()
}

// interestBarrier makes a new local interest known to every peer before the
// caller goes on: it updates the interest now and, unless every peer has
// already confirmed the current groups, pushes them to the peers and waits
// for their confirmations (bounded by InterestBarrier). Events a client
// publishes after announcing a listener therefore find the peers already
// sending that listener's groups (an RPC reply, for instance).
func (n *Node) interestBarrier() { n.confirmInterest(n.updateInterest()) }

// confirmInterest is the waiting half of interestBarrier, after an update
// of the interest that changed the announced groups or not.
func (n *Node) confirmInterest(changed bool) {
	v := n.mem.LocalVersion()
	if !changed && n.confirmed.Load() >= v {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.InterestBarrier)
	defer cancel()
	if _, err := n.mem.PushLocal(ctx); err != nil {
		n.log.Debug("interest push incomplete", "err", err)
		return
	}
	n.confirmed.Store(v)
}

// updateJoins joins the pool addresses of ids and leaves the others.
func (n *Node) updateJoins(joined map[netip.AddrPort]bool, ids []datagram.GroupID) {
	want := map[netip.AddrPort]bool{}
	for _, id := range ids {
		want[n.pool.Addr(id)] = true
	}
	for a := range want {
		n.joinAddr(joined, a)
	}
	for a := range joined {
		if !want[a] {
			if err := n.conn.Leave(a); err != nil && !errors.Is(err, transport.ErrClosed) {
				n.log.Warn("cannot leave multicast group", "addr", a, "err", err)
			}
			delete(joined, a)
		}
	}
}

// joinGroup joins the pool address of id unless it is joined already.
func (n *Node) joinGroup(joined map[netip.AddrPort]bool, id datagram.GroupID) {
	n.joinAddr(joined, n.pool.Addr(id))
}

// joinAddr joins pool address a unless it is joined already.
func (n *Node) joinAddr(joined map[netip.AddrPort]bool, a netip.AddrPort) {
	if joined[a] {
		return
	}
	if err := n.conn.Join(a); err != nil {
		if !errors.Is(err, transport.ErrClosed) { // a node closing while its interest changes
			n.log.Error("cannot join multicast group", "addr", a, "err", err)
		}
		return
	}
	joined[a] = true
}

// memberLoop frees the streams of peers that leave or fail. It exits when
// the membership closes its event channel or on stop.
func (n *Node) memberLoop() {
	for {
		select {
		case <-n.stop:
			return
		case ev, ok := <-n.mem.Events():
			if !ok {
				return
			}
			n.m.Peers.Set(float64(len(n.mem.Members())))
			if ev.Kind == membershipLeave || ev.Kind == membershipFail {
				inst := ev.Member.Instance
				n.log.Info("peer gone", "name", ev.Member.Name, "kind", ev.Kind.String())
				n.eng.Forget(inst)
				if n.guard != nil {
					n.guard.Forget(ev.Member.Name, inst)
				}
			}
		}
	}
}

func lossLabel(l qos.LossReport) metrics.LossReason {
	switch l.Reason {
	case qos.ReasonGone:
		return metrics.LossGone
	case qos.ReasonTrailPassed:
		return metrics.LossTrail
	case qos.ReasonRetriesExhausted:
		return metrics.LossRetries
	case qos.ReasonReassemblyEvicted:
		return metrics.LossReassembly
	}
	return metrics.LossGapLimit
}
