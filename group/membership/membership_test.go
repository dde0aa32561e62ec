package membership

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/transport/datagram"
)

// waitTimeout bounds every wait for the cluster to converge; the Local
// profile normally converges in well under a second.
const waitTimeout = 30 * time.Second

// testNode is a started Membership with a log of every event it reported.
type testNode struct {
	*Membership
	mu     sync.Mutex
	events []Event
	done   chan struct{}
}

// startNode starts a Local-profile node on 127.0.0.1 with a kernel-chosen
// port, wanting groups, joined to seeds. It is closed when the test ends.
func startNode(t *testing.T, name string, instance byte, groups []group.GroupID, seeds ...*testNode) *testNode {
	t.Helper()
	cfg := LocalConfig()
	cfg.NodeName = name
	return startNodeConfig(t, cfg, instance, groups, seeds...)
}

// startNodeConfig is startNode with a given configuration.
func startNodeConfig(t *testing.T, cfg Config, instance byte, groups []group.GroupID, seeds ...*testNode) *testNode {
	t.Helper()
	name := cfg.NodeName
	if cfg.Logger == nil {
		cfg.Logger = discard
	}
	for _, s := range seeds {
		cfg.Join = append(cfg.Join, s.GossipAddr().String())
	}
	local := LocalState{
		Instance: datagram.InstanceID{instance, 0x5a},
		DataAddr: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 40000+uint16(instance)),
		Groups:   groups,
	}
	m, err := New(cfg, local)
	if err != nil {
		t.Fatal(err)
	}
	n := &testNode{Membership: m, done: make(chan struct{})}
	go n.record()
	t.Cleanup(func() {
		_ = m.Close()
		<-n.done
	})
	if len(seeds) > 0 {
		// Join returned after contacting a seed; the member list follows
		// as the seed's state is merged.
		testutil.WaitFor(t, waitTimeout, name+" to join", func() bool { return len(m.Members()) > 0 })
	}
	return n
}

// record appends every event to the log until the channel closes.
func (n *testNode) record() {
	defer close(n.done)
	for ev := range n.Events() {
		n.mu.Lock()
		n.events = append(n.events, ev)
		n.mu.Unlock()
	}
}

// event returns the first logged event of kind about peer's instance.
func (n *testNode) event(kind EventKind, peer *testNode) (Event, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ev := range n.events {
		if ev.Kind == kind && ev.Member.Name == peer.Name() && ev.Member.Instance == peer.Instance() {
			return ev, true
		}
	}
	return Event{}, false
}

// eventLog describes the logged events for failure messages.
func (n *testNode) eventLog() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var b strings.Builder
	for _, ev := range n.events {
		fmt.Fprintf(&b, " %v:%s:%x", ev.Kind, ev.Member.Name, ev.Member.Instance[:2])
	}
	return b.String()
}

// waitEvent waits until n has logged an event of kind about peer's instance.
func waitEvent(t *testing.T, n *testNode, kind EventKind, peer *testNode) Event {
	t.Helper()
	var ev Event
	ok := false
	testutil.WaitForMsg(t, waitTimeout, func() string {
		return fmt.Sprintf("%s: %v event of %s (events:%s)", n.Name(), kind, peer.Name(), n.eventLog())
	}, func() bool {
		ev, ok = n.event(kind, peer)
		return ok
	})
	return ev
}

// knows reports whether m holds peer's state with exactly groups.
func knows(m, peer *testNode, groups ...group.GroupID) bool {
	st, ok := m.Interest().Peer(peer.Name())
	want := group.SortGroups(slices.Clone(groups))
	return ok && st.Instance == peer.Instance() && slices.Equal(st.Groups, want)
}

func TestClusterInterest(t *testing.T) {
	ga, gb, gc, gd := gid("/a/"), gid("/b/"), gid("/c/"), gid("/a/d/")
	a := startNode(t, "a", 1, []group.GroupID{ga})
	b := startNode(t, "b", 2, []group.GroupID{gb}, a)
	c := startNode(t, "c", 3, []group.GroupID{ga, gc}, a)

	took := testutil.WaitFor(t, waitTimeout, "interest of all nodes everywhere", func() bool {
		return knows(a, b, gb) && knows(a, c, ga, gc) && knows(b, a, ga) && knows(b, c, ga, gc) &&
			knows(c, a, ga) && knows(c, b, gb)
	})
	t.Logf("3 nodes converged in %v", took)

	for _, m := range []*testNode{a, b, c} {
		for _, o := range []*testNode{a, b, c} {
			if m != o {
				ev := waitEvent(t, m, EventJoin, o)
				if ev.Member.Instance != o.Instance() || ev.Member.GossipAddr != o.GossipAddr() {
					t.Fatalf("%s: join event of %s = %+v", m.Name(), o.Name(), ev.Member)
				}
			}
		}
		if got := len(m.Members()); got != 2 {
			t.Fatalf("%s has %d members", m.Name(), got)
		}
	}
	peers := b.Interest().Peers(ga)
	if len(peers) != 2 {
		t.Fatalf("b: Peers(/a/) = %+v", peers)
	}
	for _, p := range peers {
		if want := map[string]uint16{"a": 40001, "c": 40003}[p.Name]; p.Addr.Port() != want {
			t.Fatalf("b: peer %s data address %s", p.Name, p.Addr)
		}
	}

	// A change propagates within a bounded time.
	if err := a.AddLocalGroup(gd); err != nil {
		t.Fatal(err)
	}
	took = testutil.WaitFor(t, waitTimeout, "added group to reach b and c", func() bool {
		return b.Interest().Wanted(gd) && c.Interest().Wanted(gd)
	})
	t.Logf("added group propagated in %v", took)
	a.RemoveLocalGroup(gd)
	took = testutil.WaitFor(t, waitTimeout, "removed group to reach b and c", func() bool {
		return !b.Interest().Wanted(gd) && !c.Interest().Wanted(gd)
	})
	t.Logf("removed group propagated in %v", took)
	if err := c.SetLocalGroups(nil); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, waitTimeout, "c's empty set to reach a and b", func() bool { return knows(a, c) && knows(b, c) })
	if got := a.Interest().Peers(ga); len(got) != 0 {
		t.Fatalf("a: Peers(/a/) = %+v after c dropped it", got)
	}
}

func TestClusterFailureAndLeave(t *testing.T) {
	a := startNode(t, "a", 1, []group.GroupID{gid("/a/")})
	b := startNode(t, "b", 2, nil, a)
	c := startNode(t, "c", 3, []group.GroupID{gid("/c/")}, a)
	d := startNode(t, "d", 4, nil, a)
	testutil.WaitFor(t, waitTimeout, "c's interest at a and b", func() bool { return knows(a, c, gid("/c/")) && knows(b, c, gid("/c/")) })
	// Every member known everywhere first: a loaded machine may take a while
	// to gossip d's join to b, and a leave needs the join before it.
	for _, m := range []*testNode{a, b} {
		waitEvent(t, m, EventJoin, d)
	}

	// c stops without leaving: the others detect the failure.
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*testNode{a, b} {
		waitEvent(t, m, EventFail, c)
		if m.Interest().Wanted(gid("/c/")) {
			t.Fatalf("%s still has c's interest", m.Name())
		}
	}
	t.Logf("failure detected in %v", time.Since(start))

	// d leaves on purpose: the others see a leave.
	if err := d.Leave(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*testNode{a, b} {
		waitEvent(t, m, EventLeave, d)
		if _, failed := m.event(EventFail, d); failed {
			t.Fatalf("%s: d reported failed as well as left", m.Name())
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if got := a.Members(); len(got) != 1 || got[0].Name != "b" {
		t.Fatalf("a's members after failure and leave: %+v", got)
	}
}

func TestClusterLateJoiner(t *testing.T) {
	a := startNode(t, "a", 1, []group.GroupID{gid("/a/")})
	b := startNode(t, "b", 2, []group.GroupID{gid("/b/")}, a)
	testutil.WaitFor(t, waitTimeout, "a and b to converge", func() bool { return knows(a, b, gid("/b/")) && knows(b, a, gid("/a/")) })

	// The late joiner contacts b only; a's state reaches it through b's
	// table. startNode returns once the members are known, which memberlist
	// merges just before it hands the table to the delegate: the interest
	// may follow a moment later.
	late := startNode(t, "late", 3, []group.GroupID{gid("/l/")}, b)
	testutil.WaitFor(t, waitTimeout, "the late joiner to learn the existing interest", func() bool {
		return knows(late, b, gid("/b/")) && knows(late, a, gid("/a/"))
	})
	testutil.WaitFor(t, waitTimeout, "b and a to learn the late joiner", func() bool {
		return knows(b, late, gid("/l/")) && knows(a, late, gid("/l/"))
	})
}

func TestClusterRestartSameName(t *testing.T) {
	a := startNode(t, "a", 1, nil)
	b1 := startNode(t, "b", 2, []group.GroupID{gid("/old/")}, a)
	testutil.WaitFor(t, waitTimeout, "b's interest at a", func() bool { return knows(a, b1, gid("/old/")) })
	if err := b1.Close(); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, a, EventFail, b1)

	// Same name, new instance, new port.
	b2 := startNode(t, "b", 12, []group.GroupID{gid("/new/")}, a)
	ev := waitEvent(t, a, EventJoin, b2)
	if ev.Member.GossipAddr != b2.GossipAddr() || ev.Member.GossipAddr == b1.GossipAddr() {
		t.Fatalf("rejoin event at %s, want %s", ev.Member.GossipAddr, b2.GossipAddr())
	}
	testutil.WaitFor(t, waitTimeout, "restarted b's interest at a", func() bool { return knows(a, b2, gid("/new/")) })
	if a.Interest().Wanted(gid("/old/")) {
		t.Fatal("old instance's interest came back")
	}
	testutil.WaitFor(t, waitTimeout, "a's state at restarted b", func() bool { return knows(b2, a) })
}

func TestClusterLargeState(t *testing.T) {
	ids := make([]group.GroupID, 300) // about 4.8 KB: too large for a broadcast
	for i := range ids {
		ids[i] = gid(fmt.Sprintf("/big/%d/", i))
	}
	a := startNode(t, "a", 1, nil)
	b := startNode(t, "b", 2, nil, a)
	testutil.WaitFor(t, waitTimeout, "b known to a", func() bool { return knows(a, b) && knows(b, a) })
	if err := a.SetLocalGroups(ids); err != nil {
		t.Fatal(err)
	}
	took := testutil.WaitFor(t, waitTimeout, "large state at b", func() bool { return knows(b, a, ids...) })
	t.Logf("300-group state pushed in %v", took)
	// The push is counted once its write returned, which may be after b
	// applied the state.
	testutil.WaitFor(t, waitTimeout, "the TCP push counted", func() bool { return a.Stats().Pushes > 0 })
	if err := a.SetLocalGroups(ids[:299]); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, waitTimeout, "shrunk large state at b", func() bool { return knows(b, a, ids[:299]...) })
}

func TestLifecycleAfterClose(t *testing.T) {
	cfg := LocalConfig()
	cfg.Logger = discard
	m, err := New(cfg, LocalState{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Instance() == (datagram.InstanceID{}) {
		t.Fatal("no random instance id")
	}
	if ga := m.GossipAddr(); ga.Port() == 0 || ga.Addr() != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("GossipAddr %s", ga)
	}
	if err := m.Leave(time.Second); err != nil { // alone: returns at once
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if _, ok := <-m.Events(); ok {
		t.Fatal("events channel open after Close")
	}
	if _, err := m.Join([]string{"127.0.0.1:1"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Join after Close: %v", err)
	}
	if err := m.Leave(time.Second); !errors.Is(err, ErrClosed) {
		t.Fatalf("Leave after Close: %v", err)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	if _, err := New(Config{BindPort: 70000}, LocalState{}); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad config: %v", err)
	}
	cfg := LocalConfig()
	cfg.Logger = discard
	cfg.Group.MaxGroupsPerPeer = 1
	if _, err := New(cfg, LocalState{Groups: []group.GroupID{gid("/1/"), gid("/2/")}}); !errors.Is(err, group.ErrTooManyGroups) {
		t.Fatalf("too many initial groups: %v", err)
	}
	// Unreachable seeds are not fatal.
	cfg = LocalConfig()
	cfg.Logger = discard
	cfg.Join = []string{"127.0.0.1:1"}
	m, err := New(cfg, LocalState{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestClusterEncryptedAndLabelled(t *testing.T) {
	cfg := LocalConfig()
	cfg.SecretKey = []byte("0123456789abcdef")
	cfg.Label = "site-1"
	cfg.NodeName = "a"
	a := startNodeConfig(t, cfg, 1, []group.GroupID{gid("/a/")})
	cfg.NodeName = "b"
	b := startNodeConfig(t, cfg, 2, nil, a)
	testutil.WaitFor(t, waitTimeout, "interest over encrypted gossip", func() bool { return knows(b, a, gid("/a/")) })
	testutil.WaitFor(t, waitTimeout, "a to list b", func() bool { return len(a.Members()) == 1 })

	// A node of another site (other label and key) cannot join.
	other := LocalConfig()
	other.NodeName, other.Label, other.SecretKey, other.Logger = "x", "site-2", []byte("fedcba9876543210"), discard
	x, err := New(other, LocalState{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if n, err := x.Join([]string{a.GossipAddr().String()}); err == nil || n != 0 {
		t.Fatalf("foreign node joined: %d %v", n, err)
	}
	if len(a.Members()) != 1 {
		t.Fatalf("a's members: %+v", a.Members())
	}
}

// TestPushLocal: with gossip made too slow to matter, PushLocal alone makes
// a new interest known to every peer by the time it returns: it waits for
// each peer's confirmation.
func TestPushLocal(t *testing.T) {
	a, b := startPair(t)
	g := gid("/pushed/")
	if _, err := a.local.Add(g); err != nil {
		t.Fatal(err)
	}
	n, err := a.PushLocal(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("PushLocal reached %d members: %v", n, err)
	}
	if !knows(b, a, g) {
		t.Fatal("PushLocal returned before b applied the state")
	}
}

// TestPushLocalLargeStateSentOnce: a state too large for a broadcast goes
// to each peer once per PushLocal: the push loop, woken by the same
// change, leaves the peers PushLocal sends it to.
func TestPushLocalLargeStateSentOnce(t *testing.T) {
	a, b := startPair(t)
	ids := largeGroups("large", 2*MaxBroadcastBytes/16)
	if _, err := a.local.Set(ids); err != nil {
		t.Fatal(err)
	}
	before := a.Stats()
	if n, err := a.PushLocal(context.Background()); err != nil || n != 1 {
		t.Fatalf("PushLocal reached %d members: %v", n, err)
	}
	if !knows(b, a, ids...) {
		t.Fatal("PushLocal returned before b applied the state")
	}
	testutil.WaitFor(t, waitTimeout, "the push loop to pass b over", func() bool {
		st := a.Stats()
		return st.PushesSkipped > before.PushesSkipped && st.Pushes > before.Pushes
	})
	if got := a.Stats().Pushes - before.Pushes; got != 1 {
		t.Fatalf("%d pushes of the state to b, want 1", got)
	}
}
