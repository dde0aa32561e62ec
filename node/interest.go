package node

import (
	"context"
	"maps"
	"net/netip"
	"slices"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// wantedSet maps the groups local sinks want to their scopes, read
// lock-free by the socket readers and the engine. Writers (serialized by
// interestMu) replace immutable maps: store a whole new base, add a group
// into a small extra map copied on each add and folded into the base once
// it holds about √n groups, so adding n groups one by one copies O(n√n)
// entries rather than O(n²).
type wantedSet struct {
	p atomic.Pointer[wantedMaps]
}

// wantedMaps is one immutable version of the wanted set.
type wantedMaps struct {
	base, extra map[datagram.GroupID]scope.Scope
}

// store makes scopes, whose group ids are ids (in the same order), the
// wanted set.
func (w *wantedSet) store(scopes []scope.Scope, ids []datagram.GroupID) {
	m := make(map[datagram.GroupID]scope.Scope, len(scopes))
	for i, s := range scopes {
		m[ids[i]] = s
	}
	w.p.Store(&wantedMaps{base: m})
}

// add adds group id of scope sc.
func (w *wantedSet) add(id datagram.GroupID, sc scope.Scope) {
	cur := w.p.Load()
	if len(cur.extra)*len(cur.extra) >= len(cur.base)+wantedExtraMin*wantedExtraMin {
		m := make(map[datagram.GroupID]scope.Scope, len(cur.base)+len(cur.extra)+1)
		maps.Copy(m, cur.base)
		maps.Copy(m, cur.extra)
		m[id] = sc
		w.p.Store(&wantedMaps{base: m})
		return
	}
	extra := make(map[datagram.GroupID]scope.Scope, len(cur.extra)+1)
	maps.Copy(extra, cur.extra)
	extra[id] = sc
	w.p.Store(&wantedMaps{base: cur.base, extra: extra})
}

func (w *wantedSet) has(id datagram.GroupID) bool {
	_, ok := w.scopeOf(id)
	return ok
}

// scopeOf returns the wanted scope whose group is id.
func (w *wantedSet) scopeOf(id datagram.GroupID) (scope.Scope, bool) {
	m := w.p.Load()
	if s, ok := m.extra[id]; ok {
		return s, true
	}
	s, ok := m.base[id]
	return s, ok
}

// wantsGroup reports whether a local sink wants the group.
func (n *Node) wantsGroup(id datagram.GroupID) bool { return n.wanted.has(id) }

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
	return minimalScopes(all)
}

// minimalScopes drops every scope contained in another one of the list
// (and repeats), so that an event reaches this host through exactly one of
// its groups. It sorts in by length and costs O(len(in) · depth).
func minimalScopes(in []scope.Scope) []scope.Scope {
	slices.SortFunc(in, func(a, b scope.Scope) int { return len(a.String()) - len(b.String()) })
	var out []scope.Scope
	kept := make(map[scope.Scope]struct{}, len(in))
	var supers []scope.Scope
	for _, s := range in {
		// A scope containing s is one of its super-scopes (or s itself)
		// and, being shorter or equal, was seen before it.
		supers = s.AppendSuperScopes(supers[:0], true)
		covered := false
		for _, p := range supers {
			if _, ok := kept[p]; ok {
				covered = true
				break
			}
		}
		if !covered {
			kept[s] = struct{}{}
			out = append(out, s)
		}
	}
	return out
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
	narrowed := false
	curSet := newScopeSet(cur)
	for _, s := range n.lastScopes {
		if !curSet.covers(s) {
			narrowed = true
			n.linger[s] = lingerEntry{until: now.Add(n.cfg.InterestLinger)}
		}
	}
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
		for s, e := range n.linger {
			if e.version == 0 {
				e.version = v
				n.linger[s] = e
			}
		}
		go n.confirmNarrowing(v)
	}
	return changed
}

// applyAccepted sets what the node receives: the announced scopes and the
// lingering ones; it arms a timer for the next linger to expire. It returns
// the group ids of cur, in the order of cur, for the announcement.
func (n *Node) applyAccepted(now time.Time, cur []scope.Scope) []datagram.GroupID {
	all := slices.Clone(cur)
	var next time.Time
	for s, e := range n.linger {
		if !e.until.After(now) || covered(cur, s) {
			delete(n.linger, s)
			continue
		}
		all = append(all, s)
		if next.IsZero() || e.until.Before(next) {
			next = e.until
		}
	}
	if !next.IsZero() {
		time.AfterFunc(next.Sub(now), n.signalInterest)
	}
	n.storeLingering()
	n.m.LingeringScopes.Set(float64(len(n.linger)))
	// Not minimized: a lingering scope may contain an announced one, and
	// both groups must be received.
	accepted := all
	ids := unsortedGroupIDs(accepted) // cur's first, as accepted lists them
	n.wanted.store(accepted, ids)
	if !n.cfg.Unicast {
		n.updateJoins(n.joined, ids)
	}
	n.m.MulticastGroups.Set(float64(len(n.joined)))
	return ids[:len(cur)]
}

// storeLingering publishes the lingering scopes for mayRepeat.
func (n *Node) storeLingering() {
	if len(n.linger) == 0 {
		n.lingering.Store(nil)
		return
	}
	scopes := make([]scope.Scope, 0, len(n.linger))
	for s := range n.linger {
		scopes = append(scopes, s)
	}
	n.lingering.Store(&scopes)
}

// mayRepeat reports whether an event on sc may arrive twice: only while a
// scope containing it lingers is it received through two groups (the
// lingering scope's and the narrower one's), so only then are its event ids
// remembered and checked.
func (n *Node) mayRepeat(sc scope.Scope) bool {
	p := n.lingering.Load()
	if p == nil {
		return false
	}
	for _, l := range *p {
		if l.Contains(sc) {
			return true
		}
	}
	return false
}

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
	settle := time.Now().Add(lingerSettle)
	for s, e := range n.linger {
		if e.version != 0 && e.version <= v && settle.Before(e.until) {
			e.until = settle
			n.linger[s] = e
		}
	}
	n.applyAccepted(time.Now(), n.lastScopes)
	n.interestMu.Unlock()
}

// lingerEntry is a scope given up but still received until the peers
// confirmed the state version that dropped it, or until the deadline.
type lingerEntry struct {
	until   time.Time
	version uint64
}

// unsortedGroupIDs returns the group ids of scopes in the order of scopes.
func unsortedGroupIDs(scopes []scope.Scope) []datagram.GroupID {
	ids := make([]datagram.GroupID, 0, len(scopes))
	for _, s := range scopes {
		ids = append(ids, group.ID(s))
	}
	return ids
}

// scopeSet is a set of scopes for containment checks in O(depth).
type scopeSet map[scope.Scope]struct{}

func newScopeSet(scopes []scope.Scope) scopeSet {
	m := make(scopeSet, len(scopes))
	for _, s := range scopes {
		m[s] = struct{}{}
	}
	return m
}

// covers reports whether a scope of the set contains s.
func (m scopeSet) covers(s scope.Scope) bool {
	var buf [8]scope.Scope
	for _, p := range s.AppendSuperScopes(buf[:0], true) {
		if _, ok := m[p]; ok {
			return true
		}
	}
	return false
}

// covered reports whether one of scopes contains s.
func covered(scopes []scope.Scope, s scope.Scope) bool {
	for _, c := range scopes {
		if c.Contains(s) {
			return true
		}
	}
	return false
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
			if err := n.conn.Leave(a); err != nil {
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
		n.log.Error("cannot join multicast group", "addr", a, "err", err)
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
				select {
				case n.eng.ctlCh <- func(e *engine) { e.forget(inst, timeNow()) }:
				case <-n.stop:
					return
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
