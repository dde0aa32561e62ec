package membership

import (
	"fmt"
	"net/netip"

	"github.com/hashicorp/memberlist"
)

// EventKind says what happened to a member.
type EventKind uint8

const (
	// EventJoin: a member (a new instance) became alive.
	EventJoin EventKind = iota + 1
	// EventLeave: a member announced its departure and left.
	EventLeave
	// EventFail: a member stopped answering, or was replaced by a new
	// instance of the same name, without announcing a departure.
	EventFail
	// EventUpdate: a member changed its data address.
	EventUpdate
)

// String returns the lowercase name of k.
func (k EventKind) String() string {
	switch k {
	case EventJoin:
		return "join"
	case EventLeave:
		return "leave"
	case EventFail:
		return "fail"
	case EventUpdate:
		return "update"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event reports a change of a remote member. For EventLeave and EventFail,
// Member.Instance is the departed instance whose streams can be freed.
type Event struct {
	Kind   EventKind
	Member Member
}

// eventDelegate receives memberlist's member notifications. Memberlist calls
// it with its node lock held: it must not block or call memberlist.
type eventDelegate Membership

// NotifyJoin handles a node that became alive.
func (d *eventDelegate) NotifyJoin(n *memberlist.Node) { (*Membership)(d).onAlive(n) }

// NotifyUpdate handles a node whose metadata changed.
func (d *eventDelegate) NotifyUpdate(n *memberlist.Node) { (*Membership)(d).onAlive(n) }

// NotifyLeave handles a node that left or was declared dead.
func (d *eventDelegate) NotifyLeave(n *memberlist.Node) { (*Membership)(d).onGone(n) }

// NotifyConflict logs a name used by two addresses at once: the newcomer is
// ignored until the name's owner is dead.
func (d *eventDelegate) NotifyConflict(existing, other *memberlist.Node) {
	m := (*Membership)(d)
	m.stats.conflicts.Add(1)
	m.log.Warn("membership: node name used by two addresses", "node", existing.Name,
		"existing", existing.Address(), "other", other.Address())
}

// onAlive records a member from its metadata and reports what changed.
func (m *Membership) onAlive(n *memberlist.Node) {
	if n.Name == m.name {
		return
	}
	meta, err := decodeMeta(n.Meta)
	if err != nil {
		m.stats.metaInvalid.Add(1)
		m.log.Debug("membership: ignoring node with unreadable metadata", "node", n.Name, "err", err)
		return
	}
	gossip, _ := netip.AddrFromSlice(n.Addr)
	cur := &member{
		Member: Member{Name: n.Name, Instance: meta.instance, DataAddr: meta.dataAddr,
			GossipAddr: netip.AddrPortFrom(gossip.Unmap(), n.Port)},
		leaving: meta.leaving,
	}
	var evs [2]Event
	k := 0
	m.mu.Lock()
	old := m.members[n.Name]
	switch {
	case old != nil && old.Instance != cur.Instance:
		m.interest.RemovePeer(n.Name)
		evs[k] = departure(old)
		k++
		fallthrough
	case old == nil:
		evs[k] = Event{Kind: EventJoin, Member: cur.Member}
		k++
	case old.DataAddr != cur.DataAddr || old.GossipAddr != cur.GossipAddr:
		evs[k] = Event{Kind: EventUpdate, Member: cur.Member}
		k++
	}
	m.members[n.Name] = cur
	m.numMembers.Store(int64(len(m.members)))
	m.indexSendersLocked()
	if st, ok := m.pending[n.Name]; ok && st.Instance == cur.Instance {
		delete(m.pending, n.Name)
		m.updateLocked(n.Name, st)
	}
	m.mu.Unlock()
	for _, ev := range evs[:k] {
		m.emit(ev)
	}
}

// onGone forgets a member that left or failed and reports it.
func (m *Membership) onGone(n *memberlist.Node) {
	if n.Name == m.name {
		return
	}
	m.mu.Lock()
	old := m.members[n.Name]
	delete(m.members, n.Name)
	delete(m.pending, n.Name)
	m.numMembers.Store(int64(len(m.members)))
	m.indexSendersLocked()
	switch {
	case old == nil:
	case old.leaving:
		m.interest.RemovePeer(n.Name)
	default:
		// Failed, not left: the same instance may be back once a
		// partition heals or a paused process runs again.
		m.interest.ForgetPeer(n.Name)
	}
	m.mu.Unlock()
	if old != nil {
		m.emit(departure(old))
	}
}

// departure returns the leave or fail event of a member that is gone.
func departure(mb *member) Event {
	if mb.leaving {
		return Event{Kind: EventLeave, Member: mb.Member}
	}
	return Event{Kind: EventFail, Member: mb.Member}
}

// emit queues ev without blocking; a full queue drops it (counted).
func (m *Membership) emit(ev Event) {
	m.evMu.Lock()
	defer m.evMu.Unlock()
	if m.evClosed {
		return
	}
	select {
	case m.events <- ev:
	default:
		m.stats.eventsDropped.Add(1)
		m.log.Warn("membership: event queue full, event dropped", "event", ev.Kind.String(), "node", ev.Member.Name)
	}
}
