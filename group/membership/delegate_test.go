package membership

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"testing"

	"github.com/hashicorp/memberlist"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/transport/datagram"
)

var discard = slog.New(slog.DiscardHandler)

// newUnit returns a Membership without memberlist, to drive its delegates
// directly.
func newUnit(t *testing.T, name string) *Membership {
	t.Helper()
	cfg := LocalConfig()
	cfg.NodeName = name
	cfg.Logger = discard
	m, err := newMembership(cfg.withDefaults(), LocalState{Instance: datagram.InstanceID{0xee, byte(len(name))}})
	if err != nil {
		t.Fatal(err)
	}
	m.queue = &memberlist.TransmitLimitedQueue{NumNodes: func() int { return 3 }, RetransmitMult: 2}
	return m
}

func mlNode(name string, meta nodeMeta) *memberlist.Node {
	return &memberlist.Node{Name: name, Addr: net.ParseIP("127.0.0.1"), Port: 7000, Meta: encodeMeta(meta)}
}

func stateMsg(t *testing.T, name string, st group.PeerState) []byte {
	t.Helper()
	st.Groups = group.SortGroups(st.Groups)
	b, err := appendStateMsg(nil, name, &st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func nextEvent(t *testing.T, m *Membership) Event {
	t.Helper()
	select {
	case ev := <-m.events:
		return ev
	default:
		t.Fatal("no event queued")
		return Event{}
	}
}

func noEvent(t *testing.T, m *Membership) {
	t.Helper()
	select {
	case ev := <-m.events:
		t.Fatalf("unexpected event %v %s", ev.Kind, ev.Member.Name)
	default:
	}
}

func TestDelegateMemberLifecycle(t *testing.T) {
	m := newUnit(t, "self")
	d := (*delegate)(m)
	ev := (*eventDelegate)(m)
	i1, i2 := datagram.InstanceID{1}, datagram.InstanceID{2}
	a := gid("/a/")

	// A state that arrives before its member is held, then applied on join.
	d.NotifyMsg(stateMsg(t, "p", group.PeerState{Version: 1, Instance: i1, Groups: []group.GroupID{a}}))
	if m.interest.Wanted(a) || m.Stats().StatesPending != 1 {
		t.Fatal("state of unknown member not held pending")
	}
	ev.NotifyJoin(mlNode("p", nodeMeta{instance: i1}))
	if e := nextEvent(t, m); e.Kind != EventJoin || e.Member.Instance != i1 || e.Member.GossipAddr.Port() != 7000 {
		t.Fatalf("join event %+v", e)
	}
	if !m.interest.Wanted(a) {
		t.Fatal("pending state not applied on join")
	}

	// A newer version is applied and relayed once; a repeat is not.
	msg := stateMsg(t, "p", group.PeerState{Version: 2, Instance: i1})
	d.NotifyMsg(msg)
	d.NotifyMsg(msg)
	if m.interest.Wanted(a) || m.queue.NumQueued() != 1 || m.Stats().StatesStale != 1 {
		t.Fatalf("update: wanted %v queued %d stats %+v", m.interest.Wanted(a), m.queue.NumQueued(), m.Stats())
	}
	// States of another instance than the member's are dropped.
	d.NotifyMsg(stateMsg(t, "p", group.PeerState{Version: 9, Instance: i2, Groups: []group.GroupID{a}}))
	if m.interest.Wanted(a) || m.Stats().StatesWrongInstance != 1 {
		t.Fatal("state of a foreign instance applied")
	}

	// The member comes back as a new instance: the old one failed.
	ev.NotifyUpdate(mlNode("p", nodeMeta{instance: i2}))
	if e := nextEvent(t, m); e.Kind != EventFail || e.Member.Instance != i1 {
		t.Fatalf("replacement: first event %+v", e)
	}
	if e := nextEvent(t, m); e.Kind != EventJoin || e.Member.Instance != i2 {
		t.Fatalf("replacement: second event %+v", e)
	}
	if _, ok := m.interest.Peer("p"); ok {
		t.Fatal("old instance's interest kept")
	}

	// A leaving notice of another instance changes nothing; the leaving
	// flag turns the departure into a leave.
	bye, _ := appendLeavingMsg(nil, "p", i1)
	d.NotifyMsg(bye)
	if m.members["p"].leaving {
		t.Fatal("leaving notice of an old instance applied")
	}
	ev.NotifyUpdate(mlNode("p", nodeMeta{instance: i2, leaving: true}))
	noEvent(t, m)
	ev.NotifyLeave(mlNode("p", nodeMeta{instance: i2, leaving: true}))
	if e := nextEvent(t, m); e.Kind != EventLeave || e.Member.Instance != i2 {
		t.Fatalf("leave event %+v", e)
	}
	if len(m.Members()) != 0 {
		t.Fatal("member kept after leave")
	}

}

func TestDelegateUpdatesAndBadInput(t *testing.T) {
	m := newUnit(t, "self")
	d := (*delegate)(m)
	ev := (*eventDelegate)(m)
	i1 := datagram.InstanceID{1}

	// A data address change is an update; unreadable metadata and our own
	// node are ignored.
	ev.NotifyJoin(mlNode("q", nodeMeta{instance: i1}))
	nextEvent(t, m)
	ev.NotifyUpdate(mlNode("q", nodeMeta{instance: i1, dataAddr: mlAddr("127.0.0.1:9")}))
	if e := nextEvent(t, m); e.Kind != EventUpdate || e.Member.DataAddr != mlAddr("127.0.0.1:9") {
		t.Fatalf("update event %+v", e)
	}
	ev.NotifyJoin(&memberlist.Node{Name: "junk", Meta: []byte{1, 2}})
	ev.NotifyJoin(mlNode("self", nodeMeta{}))
	ev.NotifyLeave(mlNode("self", nodeMeta{}))
	ev.NotifyLeave(mlNode("never-seen", nodeMeta{}))
	noEvent(t, m)
	if m.Stats().MetaInvalid != 1 || len(m.Members()) != 1 {
		t.Fatalf("stats %+v members %v", m.Stats(), m.Members())
	}
	d.NotifyMsg([]byte{99})
	d.NotifyMsg(nil)
	d.NotifyMsg([]byte{msgState, 3, 'a'})
	d.NotifyMsg([]byte{msgLeaving, 1, 'q', 0})
	if s := m.Stats(); s.UnknownMsgs != 2 || s.MalformedMsgs != 2 {
		t.Fatalf("bad messages counted %+v", s)
	}
}

func TestDelegateLeavingNotice(t *testing.T) {
	m := newUnit(t, "self")
	inst := datagram.InstanceID{3}
	(*eventDelegate)(m).NotifyJoin(mlNode("p", nodeMeta{instance: inst}))
	nextEvent(t, m)
	bye, err := appendLeavingMsg(nil, "p", inst)
	if err != nil {
		t.Fatal(err)
	}
	(*delegate)(m).NotifyMsg(bye)
	(*eventDelegate)(m).NotifyLeave(mlNode("p", nodeMeta{instance: inst}))
	if e := nextEvent(t, m); e.Kind != EventLeave || e.Member.Instance != inst {
		t.Fatalf("departure after notice: %+v", e)
	}
}

func TestDelegatePendingBounded(t *testing.T) {
	m := newUnit(t, "self")
	for i := 0; i < MaxPendingStates+5; i++ {
		m.apply(fmt.Sprint("p", i), group.PeerState{Version: 1, Instance: datagram.InstanceID{byte(i + 1)}})
	}
	big := group.PeerState{Groups: make([]group.GroupID, MaxPendingGroups+1)}
	m.apply("p0", big)
	if len(m.pending) != MaxPendingStates || m.Stats().PendingDropped != 6 {
		t.Fatalf("pending %d, dropped %d", len(m.pending), m.Stats().PendingDropped)
	}
	m.apply("p1", group.PeerState{Version: 1, Instance: datagram.InstanceID{2}})
	if m.Stats().StatesStale != 1 {
		t.Fatal("repeated pending state not counted stale")
	}
}

func TestDelegatePushPull(t *testing.T) {
	m1, m2 := newUnit(t, "one"), newUnit(t, "two")
	if _, err := m1.local.Add(gid("/x/")); err != nil {
		t.Fatal(err)
	}
	m1.publish()
	// m1 knows peer p; m2 knows p and m1 as members.
	ip := datagram.InstanceID{7}
	(*eventDelegate)(m1).NotifyJoin(mlNode("p", nodeMeta{instance: ip}))
	m1.apply("p", group.PeerState{Version: 4, Instance: ip, Groups: []group.GroupID{gid("/y/")}})
	(*eventDelegate)(m2).NotifyJoin(mlNode("p", nodeMeta{instance: ip}))
	(*eventDelegate)(m2).NotifyJoin(mlNode("one", nodeMeta{instance: m1.instance}))

	(*delegate)(m2).MergeRemoteState((*delegate)(m1).LocalState(true), true)
	if st, ok := m2.interest.Peer("one"); !ok || st.Version != m1.local.Version() || len(st.Groups) != 1 {
		t.Fatalf("m1's own state not merged: %+v %v", st, ok)
	}
	if st, ok := m2.interest.Peer("p"); !ok || st.Version != 4 {
		t.Fatalf("third-party state not merged: %+v %v", st, ok)
	}
	// m2's table comes back to m1 without m1's own entry being applied.
	(*delegate)(m1).MergeRemoteState((*delegate)(m2).LocalState(false), false)
	if _, ok := m1.interest.Peer("one"); ok {
		t.Fatal("own state applied as a peer")
	}
	(*delegate)(m1).MergeRemoteState([]byte{msgState}, false)
	(*delegate)(m1).MergeRemoteState([]byte{msgTable, 0, 0, 0, 1}, false)
	if s := m1.Stats(); s.UnknownMsgs != 1 || s.MalformedMsgs != 1 {
		t.Fatalf("bad tables counted %+v", s)
	}
}

func TestPublishSmallAndLarge(t *testing.T) {
	m := newUnit(t, "self")
	m.publish()
	if m.queue.NumQueued() != 1 {
		t.Fatalf("small state not queued for broadcast: %d", m.queue.NumQueued())
	}
	m.publish() // same version: nothing new
	ids := make([]group.GroupID, 100)
	for i := range ids {
		ids[i] = gid(fmt.Sprintf("/l/%d/", i))
	}
	if _, err := m.local.Set(ids); err != nil {
		t.Fatal(err)
	}
	m.publish()
	own := m.ownState.Load()
	if own.size <= MaxBroadcastBytes || len(m.pushSignal) != 1 {
		t.Fatalf("large state (%d bytes) not signalled for push", own.size)
	}
	if len(own.msg()) != own.size || len(own.pushMsg()) != own.size || own.pushMsg()[0] != msgStatePush {
		t.Fatalf("encodings of %d and %d bytes, announced %d", len(own.msg()), len(own.pushMsg()), own.size)
	}
	if got := (*delegate)(m).GetBroadcasts(2, 1400); len(got) != 1 {
		t.Fatalf("GetBroadcasts = %d messages", len(got))
	}
}

func TestEventQueueOverflow(t *testing.T) {
	m := newUnit(t, "self")
	for i := 0; i < EventQueueDepth+3; i++ {
		m.emit(Event{Kind: EventJoin})
	}
	if m.Stats().EventsDropped != 3 {
		t.Fatalf("dropped %d, want 3", m.Stats().EventsDropped)
	}
}

func mlAddr(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
