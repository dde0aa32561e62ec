package membership

import (
	"errors"
	"slices"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rsbd/rsbd/group"
)

// delegate serves memberlist's data hooks: node metadata, interest messages
// and push/pull state. Memberlist calls it from its own goroutines; it must
// not block.
type delegate Membership

// NodeMeta returns this node's metadata: instance id, data address and the
// leaving flag.
func (d *delegate) NodeMeta(limit int) []byte {
	m := (*Membership)(d)
	b := encodeMeta(nodeMeta{leaving: m.leaving.Load(), instance: m.instance, dataAddr: m.DataAddr()})
	if len(b) > limit {
		return nil // cannot happen: metaLen is far below memberlist's MetaMaxSize
	}
	return b
}

// NotifyMsg handles an interest message received by gossip or over TCP.
func (d *delegate) NotifyMsg(b []byte) {
	m := (*Membership)(d)
	switch {
	case len(b) == 0:
		m.stats.unknownMsgs.Add(1)
		return
	case b[0] == msgLeaving:
		m.onLeaving(b[1:])
		return
	case b[0] == msgStatePush:
		m.onPush(b)
		return
	case b[0] == msgStateAck:
		m.onAck(b[1:])
		return
	case b[0] == msgStateDelta:
		m.onDelta(b[1:])
		return
	case b[0] == msgStateNeedFull:
		m.onNeedFull(b[1:])
		return
	case b[0] != msgState:
		m.stats.unknownMsgs.Add(1)
		return
	}
	name, st, err := decodeStateMsg(b[1:])
	if err != nil {
		m.stats.malformed.Add(1)
		return
	}
	if m.apply(name, st) && len(b) <= MaxBroadcastBytes {
		// Relay news so it spreads epidemically, not only from its owner.
		m.queue.QueueBroadcast(&broadcast{name: name, msg: slices.Clone(b)})
	}
}

// GetBroadcasts hands memberlist the queued interest messages that fit.
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	return d.queue.GetBroadcasts(overhead, limit)
}

// LocalState returns the push/pull state: this node's interest followed by
// the interest of every peer it knows, within MaxPushPullBytes.
func (d *delegate) LocalState(join bool) []byte {
	m := (*Membership)(d)
	w := newTableWriter(MaxPushPullBytes)
	if own := m.ownState.Load(); own != nil {
		w.add(m.name, &own.state)
	}
	m.interest.Range(func(name string, st *group.PeerState) bool {
		w.add(name, st)
		return true
	})
	if w.skipped > 0 {
		m.stats.tableTruncated.Add(uint64(w.skipped))
	}
	return w.bytes()
}

// MergeRemoteState applies the interest table a peer sent in push/pull.
// Memberlist merges the member list first, so its members are known here.
func (d *delegate) MergeRemoteState(b []byte, join bool) {
	m := (*Membership)(d)
	if len(b) == 0 || b[0] != msgTable {
		m.stats.unknownMsgs.Add(1)
		return
	}
	err := decodeTable(b[1:], m.maxPeers+1, func(e tableEntry) {
		st, err := group.DecodePeerState(e.state)
		if err != nil {
			m.stats.malformed.Add(1)
			return
		}
		m.apply(e.name, st)
	})
	if err != nil {
		m.stats.malformed.Add(1)
	}
}

// onLeaving marks a member that announced it is about to leave.
func (m *Membership) onLeaving(b []byte) {
	name, inst, err := decodeLeavingMsg(b)
	if err != nil {
		m.stats.malformed.Add(1)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if mb := m.members[name]; mb != nil && mb.Instance == inst {
		mb.leaving = true
	}
}

// apply takes a peer's state from the network into the interest table when
// it belongs to the member's current instance, and reports whether it was
// new. States of members not known yet are held pending.
func (m *Membership) apply(name string, st group.PeerState) bool {
	if name == m.name {
		return false // our own state comes back through gossip
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mb := m.members[name]
	switch {
	case mb == nil:
		m.holdLocked(name, st)
		return false
	case mb.Instance != st.Instance:
		m.stats.wrongInstance.Add(1)
		return false
	}
	return m.updateLocked(name, st)
}

// updateLocked applies st to the interest table and counts the outcome.
func (m *Membership) updateLocked(name string, st group.PeerState) bool {
	err := m.interest.Update(name, st)
	switch {
	case err == nil:
		m.stats.applied.Add(1)
		return true
	case errors.Is(err, group.ErrStale):
		m.stats.stale.Add(1)
	case errors.Is(err, group.ErrDeparted):
		m.stats.departed.Add(1)
	default:
		m.stats.rejected.Add(1)
		m.log.Warn("membership: peer interest refused", "node", name, "err", err)
	}
	return false
}

// holdLocked keeps the newest state of a peer not known yet, within bounds.
func (m *Membership) holdLocked(name string, st group.PeerState) {
	old, ok := m.pending[name]
	switch {
	case len(st.Groups) > MaxPendingGroups, !ok && len(m.pending) >= MaxPendingStates:
		m.stats.pendingDropped.Add(1)
	case ok && old.Instance == st.Instance && old.Version >= st.Version:
		m.stats.stale.Add(1)
	default:
		m.pending[name] = st
		m.stats.pending.Add(1)
	}
}

// publish makes the current local set this node's gossiped state: queued as
// a broadcast when small, pushed to every member over TCP when not.
func (m *Membership) publish() {
	m.pubMu.Lock()
	defer m.pubMu.Unlock()
	st := m.local.Snapshot(m.instance, m.DataAddr())
	if st.Version <= m.published {
		return // a concurrent call already published this or a newer version
	}
	if len(st.Groups) > group.MaxEncodedGroups {
		m.log.Error("membership: cannot encode local interest", "groups", len(st.Groups), "limit", group.MaxEncodedGroups)
		return
	}
	m.published = st.Version
	own := &ownState{state: st, name: m.name, size: 2 + len(m.name) + st.EncodedLen()}
	m.ownState.Store(own)
	if own.size <= MaxBroadcastBytes {
		m.queue.QueueBroadcast(&broadcast{name: m.name, msg: own.msg()})
		return
	}
	m.signalPush()
}

// signalPush wakes the push loop.
func (m *Membership) signalPush() {
	select {
	case m.pushSignal <- struct{}{}:
	default: // a push is already due; it will send the newest state
	}
}

// pushLoop sends large local states to every member over TCP. It is the
// only goroutine of Membership and exits when Close closes stop.
func (m *Membership) pushLoop() {
	defer m.wg.Done()
	for {
		select {
		case <-m.stop:
			return
		case <-m.pushSignal:
		}
		// A change the node makes known at once (its interest barrier)
		// is followed by PushLocal within microseconds: give it the time
		// to claim its members, which this loop then leaves out.
		select {
		case <-m.stop:
			return
		case <-time.After(pushLoopDelay):
		}
		own := m.ownState.Load()
		if own == nil || own.size <= MaxBroadcastBytes {
			continue
		}
		for _, n := range m.peerNodes() {
			select {
			case <-m.stop:
				return
			default:
			}
			if m.direct.covers(n.Name, own.state.Version) {
				m.stats.pushesSkipped.Add(1)
				continue // PushLocal sends this state to n itself
			}
			if err := m.ml.SendReliable(n, own.pushMsg()); err != nil {
				m.stats.pushErrors.Add(1)
				m.log.Debug("membership: interest push failed", "node", n.Name, "err", err)
				continue
			}
			m.stats.pushes.Add(1)
		}
	}
}

// broadcast is one interest message in the transmit queue. It is named by
// its peer, so a newer state of the peer replaces an older one still queued.
type broadcast struct {
	name string
	msg  []byte
}

var _ memberlist.NamedBroadcast = (*broadcast)(nil)

// Invalidates reports whether b replaces o (same peer).
func (b *broadcast) Invalidates(o memberlist.Broadcast) bool {
	nb, ok := o.(memberlist.NamedBroadcast)
	return ok && nb.Name() == b.Name()
}

// Message returns the encoded msgState.
func (b *broadcast) Message() []byte { return b.msg }

// Finished is called when the message is no longer sent; nothing to do.
func (b *broadcast) Finished() {}

// Name returns the queue key of the peer's state.
func (b *broadcast) Name() string { return "interest/" + b.name }
