package membership

import (
	"github.com/rsbd/rsbd/group"
)

// Deltas. A Subscribe with peers pushes this node's interest to every
// member and waits for each to confirm it (PushLocal). A large interest
// (thousands of groups) would cost its whole encoding per change; a member
// that confirmed an earlier version of the current instance gets the
// change since that version instead (msgStateDelta), which it applies to
// exactly that version. A member holding anything else asks for the whole
// state (msgStateNeedFull) and gets it as a push it confirms, so PushLocal
// waits no longer than a round trip more. Deltas are an optimization only:
// gossip and push/pull carry whole states as before.

// fullSlots bounds the whole states being sent because members asked for
// them, so that requests cannot pile up goroutines or bandwidth.
var fullSlots = make(chan struct{}, MaxAckSends)

// pushFor returns what PushLocal sends member name for state own: a delta
// from the version the member confirmed when the history reaches back to
// it and the delta is smaller, else the whole state.
func (m *Membership) pushFor(name string, own *ownState) []byte {
	if own.size <= MaxBroadcastBytes {
		return own.pushMsg() // small: the whole state costs no more
	}
	m.acks.mu.Lock()
	base := m.acks.version[name]
	m.acks.mu.Unlock()
	v := own.state.Version
	if base == 0 || base >= v {
		return own.pushMsg()
	}
	added, removed, ok := m.local.Delta(base, v)
	if !ok {
		return own.pushMsg()
	}
	d := group.PeerDelta{Base: base, Version: v, Instance: m.instance, Addr: own.state.Addr, Added: added, Removed: removed}
	msg, err := appendDeltaMsg(nil, m.name, &d)
	if err != nil || len(msg) >= own.size {
		return own.pushMsg()
	}
	m.stats.deltasSent.Add(1)
	return msg
}

// onDelta applies a member's delta and confirms it, or asks for the whole
// state when the delta does not start from the state held.
func (m *Membership) onDelta(b []byte) {
	name, d, err := decodeDeltaMsg(b)
	if err != nil {
		m.stats.malformed.Add(1)
		return
	}
	if name == m.name {
		return
	}
	if !m.applyDelta(name, &d) {
		m.stats.deltaMisses.Add(1)
		if ask, err := appendNeedFullMsg(nil, m.name, d.Instance); err == nil {
			m.sendTo(name, ask, ackSlots, &m.stats.ackDrops)
		}
		return
	}
	m.confirm(name, d.Instance, d.Version)
}

// applyDelta applies d to the state held for member name and reports
// whether it could: the member must be known with d's instance and the
// state held must be the one d starts from.
func (m *Membership) applyDelta(name string, d *group.PeerDelta) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	mb := m.members[name]
	if mb == nil || mb.Instance != d.Instance {
		return false
	}
	st, ok := m.interest.Peer(name)
	if !ok {
		return false
	}
	next, err := d.Apply(st)
	if err != nil {
		return false
	}
	m.stats.deltasApplied.Add(1)
	m.updateLocked(name, next)
	return true
}

// onNeedFull pushes this node's whole state to the member that asked for
// it after a delta it could not apply.
func (m *Membership) onNeedFull(b []byte) {
	name, inst, err := decodeNeedFullMsg(b)
	if err != nil {
		m.stats.malformed.Add(1)
		return
	}
	own := m.ownState.Load()
	if inst != m.instance || own == nil {
		return // about an earlier run of this node
	}
	m.stats.fullOnRequest.Add(1)
	m.sendTo(name, own.pushMsg(), fullSlots, &m.stats.fullDrops)
}
