package group

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sync"
	"testing"

	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

func gid(s string) GroupID { return ID(scope.MustParse(s)) }

func inst(b byte) datagram.InstanceID { return datagram.InstanceID{b, 0xaa} }

func newTestInterest(t testing.TB, cfg Config) *Interest {
	t.Helper()
	in, err := NewInterest(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func peerNames(ps []PeerAddr) []string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

func TestInterestUpdateAndQuery(t *testing.T) {
	in := newTestInterest(t, Config{})
	a, b, c := gid("/a/"), gid("/b/"), gid("/c/")
	addrA := netip.MustParseAddrPort("127.0.0.1:1000")
	if err := in.Update("nodeA", PeerState{Version: 1, Instance: inst(1), Addr: addrA, Groups: []GroupID{b, a, a}}); err != nil {
		t.Fatal(err)
	}
	if err := in.Update("nodeB", PeerState{Version: 7, Instance: inst(2), Groups: []GroupID{b, c}}); err != nil {
		t.Fatal(err)
	}
	if !in.Wanted(a) || !in.Wanted(b) || !in.Wanted(c) || in.Wanted(gid("/d/")) {
		t.Fatal("Wanted wrong")
	}
	if got := peerNames(in.Peers(b)); !slices.Equal(got, []string{"nodeA", "nodeB"}) {
		t.Fatalf("Peers(b) = %v", got)
	}
	if got := in.Peers(a); len(got) != 1 || got[0] != (PeerAddr{Name: "nodeA", Instance: inst(1), Addr: addrA}) {
		t.Fatalf("Peers(a) = %+v", got)
	}
	if in.Len() != 2 || in.NumGroups() != 3 || !slices.Equal(in.PeerNames(), []string{"nodeA", "nodeB"}) {
		t.Fatalf("Len %d NumGroups %d names %v", in.Len(), in.NumGroups(), in.PeerNames())
	}
	st, ok := in.Peer("nodeA")
	if !ok || st.Version != 1 || len(st.Groups) != 2 || !groupsAscending(st.Groups) {
		t.Fatalf("Peer(nodeA) = %+v %v (duplicates must be dropped, groups sorted)", st, ok)
	}

	// A shared Peers slice is not changed by later updates.
	before := in.Peers(b)
	if err := in.Update("nodeA", PeerState{Version: 2, Instance: inst(1), Addr: addrA, Groups: []GroupID{c}}); err != nil {
		t.Fatal(err)
	}
	if got := peerNames(before); !slices.Equal(got, []string{"nodeA", "nodeB"}) {
		t.Fatalf("old Peers slice changed: %v", got)
	}
	if in.Wanted(a) || !in.Wanted(c) || len(in.Peers(c)) != 2 || len(in.Peers(b)) != 1 {
		t.Fatal("diff update not indexed")
	}
	if got := in.AppendPeers([]PeerAddr{{Name: "x"}}, c); len(got) != 3 {
		t.Fatalf("AppendPeers = %d", len(got))
	}
}

func TestInterestVersionsAndInstances(t *testing.T) {
	in := newTestInterest(t, Config{})
	g := gid("/g/")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(in.Update("n", PeerState{Version: 5, Instance: inst(1), Groups: []GroupID{g}}))
	for _, v := range []uint64{5, 4, 0} {
		if err := in.Update("n", PeerState{Version: v, Instance: inst(1)}); !errors.Is(err, ErrStale) {
			t.Fatalf("version %d: %v, want ErrStale", v, err)
		}
	}
	if !in.Wanted(g) {
		t.Fatal("stale state applied")
	}
	// Address change with a new version re-indexes under the new address.
	addr := netip.MustParseAddrPort("10.1.1.1:7")
	must(in.Update("n", PeerState{Version: 6, Instance: inst(1), Addr: addr, Groups: []GroupID{g}}))
	if p := in.Peers(g); len(p) != 1 || p[0].Addr != addr {
		t.Fatalf("address not updated: %+v", p)
	}
	// A restarted peer (new instance) replaces the old one whatever its version.
	must(in.Update("n", PeerState{Version: 1, Instance: inst(2)}))
	if in.Wanted(g) || !in.Departed(inst(1)) || in.Departed(inst(2)) {
		t.Fatal("new instance did not replace the old one")
	}
	if err := in.Update("n", PeerState{Version: 99, Instance: inst(1), Groups: []GroupID{g}}); !errors.Is(err, ErrDeparted) {
		t.Fatalf("old instance: %v, want ErrDeparted", err)
	}
	// Removal retires the instance.
	if st, ok := in.RemovePeer("n"); !ok || st.Instance != inst(2) {
		t.Fatalf("RemovePeer = %+v %v", st, ok)
	}
	if _, ok := in.RemovePeer("n"); ok {
		t.Fatal("second RemovePeer found the peer")
	}
	if err := in.Update("n", PeerState{Version: 2, Instance: inst(2)}); !errors.Is(err, ErrDeparted) {
		t.Fatalf("removed instance: %v, want ErrDeparted", err)
	}
	must(in.Update("n", PeerState{Version: 1, Instance: inst(3), Groups: []GroupID{g}}))
	if in.Len() != 1 || !in.Wanted(g) {
		t.Fatal("new instance after removal not accepted")
	}
}

func TestInterestLimits(t *testing.T) {
	in := newTestInterest(t, Config{MaxPeers: 2, MaxGroupsPerPeer: 2})
	if err := in.Update("", PeerState{}); !errors.Is(err, ErrInvalidPeer) {
		t.Fatalf("empty name: %v", err)
	}
	three := []GroupID{gid("/1/"), gid("/2/"), gid("/3/")}
	if err := in.Update("a", PeerState{Instance: inst(1), Groups: three}); !errors.Is(err, ErrTooManyGroups) {
		t.Fatalf("too many groups: %v", err)
	}
	for i, name := range []string{"a", "b"} {
		if err := in.Update(name, PeerState{Instance: inst(byte(i + 1)), Groups: three[:2]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.Update("c", PeerState{Instance: inst(3)}); !errors.Is(err, ErrTooManyPeers) {
		t.Fatalf("too many peers: %v", err)
	}
	// Updating an existing peer is still possible at the peer limit.
	if err := in.Update("a", PeerState{Version: 1, Instance: inst(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewInterest(Config{MaxPeers: -3}); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad config: %v", err)
	}
}

func TestTombstonesBounded(t *testing.T) {
	var tb tombstones
	tb.add(datagram.InstanceID{}) // the zero id is never retired
	if tb.has(datagram.InstanceID{}) {
		t.Fatal("zero instance retired")
	}
	id := func(i int) datagram.InstanceID { return datagram.InstanceID{byte(i), byte(i >> 8), 1} }
	for i := 0; i < MaxTombstones+10; i++ {
		tb.add(id(i))
		tb.add(id(i)) // duplicates take no slot
	}
	if len(tb.set) != MaxTombstones || len(tb.ring) != MaxTombstones {
		t.Fatalf("set %d ring %d, bound %d", len(tb.set), len(tb.ring), MaxTombstones)
	}
	if tb.has(id(9)) || !tb.has(id(10)) || !tb.has(id(MaxTombstones+9)) {
		t.Fatal("oldest tombstones not forgotten first")
	}
}

// TestInterestModel applies random updates and removals and compares the
// group index with one recomputed from the peers' states.
func TestInterestModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	in := newTestInterest(t, Config{})
	groups := make([]GroupID, 20)
	for i := range groups {
		groups[i] = gid(fmt.Sprintf("/m/%d/", i))
	}
	names := []string{"p0", "p1", "p2", "p3", "p4"}
	next := map[string]int{}
	versions := map[string]uint64{}
	for step := 0; step < 2000; step++ {
		k := rng.IntN(len(names))
		name := names[k]
		switch r := rng.IntN(10); {
		case r == 0:
			in.RemovePeer(name)
			next[name]++
			versions[name] = 0
		default:
			var gs []GroupID
			for _, g := range groups {
				if rng.IntN(3) == 0 {
					gs = append(gs, g)
				}
			}
			versions[name]++
			port := uint16(1 + rng.IntN(2))
			st := PeerState{Version: versions[name], Instance: datagram.InstanceID{byte(k), byte(next[name]), byte(next[name] >> 8), 1}, Addr: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port), Groups: gs}
			if err := in.Update(name, st); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		checkIndex(t, in, groups)
	}
}

// checkIndex compares Wanted and Peers with the peers' states.
func checkIndex(t *testing.T, in *Interest, groups []GroupID) {
	t.Helper()
	want := map[GroupID][]string{}
	in.Range(func(name string, st *PeerState) bool {
		for _, g := range st.Groups {
			want[g] = append(want[g], name)
		}
		return true
	})
	for _, g := range groups {
		w := want[g]
		slices.Sort(w)
		if got := peerNames(in.Peers(g)); !slices.Equal(got, w) || in.Wanted(g) != (len(w) > 0) {
			t.Fatalf("group %x: peers %v, want %v", g[:4], got, w)
		}
		for _, p := range in.Peers(g) {
			st, _ := in.Peer(p.Name)
			if p.Addr != st.Addr || p.Instance != st.Instance {
				t.Fatalf("stale address for %s in index", p.Name)
			}
		}
	}
	if in.NumGroups() != len(want) {
		t.Fatalf("NumGroups %d, want %d", in.NumGroups(), len(want))
	}
}

func TestInterestConcurrent(t *testing.T) {
	in := newTestInterest(t, Config{})
	g := gid("/c/")
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprint("w", w)
			for v := uint64(1); v <= 500; v++ {
				st := PeerState{Version: v, Instance: inst(byte(w + 1))}
				if v%2 == 0 {
					st.Groups = []GroupID{g}
				}
				if err := in.Update(name, st); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				for _, p := range in.Peers(g) {
					if p.Name == "" {
						t.Error("empty peer in index")
						return
					}
				}
				in.Wanted(g)
			}
		}()
	}
	wg.Wait()
	if got := len(in.Peers(g)); got != 2 { // both end on an even version
		t.Fatalf("final peers %d, want 2", got)
	}
}

func BenchmarkInterestWanted(b *testing.B) {
	in := newTestInterest(b, Config{})
	for i := 0; i < 100; i++ {
		_ = in.Update(fmt.Sprint("p", i), PeerState{Instance: inst(byte(i + 1)), Groups: []GroupID{gid(fmt.Sprintf("/g%d/", i%10))}})
	}
	g := gid("/g3/")
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			_ = in.Wanted(g)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = in.Peers(g)
			}
		})
	})
}

func BenchmarkInterestUpdate(b *testing.B) {
	in := newTestInterest(b, Config{})
	gs := make([]GroupID, 1000)
	for i := range gs {
		gs[i] = gid(fmt.Sprintf("/u/%d/", i))
	}
	gs = SortGroups(gs)
	var v uint64
	b.ReportAllocs()
	for b.Loop() {
		v++
		// Each update moves a window of 10 groups: a typical small change.
		lo := int(v % 990)
		if err := in.Update("p", PeerState{Version: v, Instance: inst(1), Groups: gs[lo : lo+10]}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestForgetPeerKeepsTheInstance: a peer forgotten (failed, not left) is
// taken again with the same instance, as after a healed partition, and its
// groups are wanted again; a removed one is not.
func TestForgetPeerKeepsTheInstance(t *testing.T) {
	in := newTestInterest(t, Config{})
	g := gid("/g/")
	if err := in.Update("n", PeerState{Version: 3, Instance: inst(1), Groups: []GroupID{g}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := in.ForgetPeer("n"); !ok || in.Wanted(g) || in.Departed(inst(1)) {
		t.Fatalf("after ForgetPeer: wanted %v, departed %v", in.Wanted(g), in.Departed(inst(1)))
	}
	if err := in.Update("n", PeerState{Version: 3, Instance: inst(1), Groups: []GroupID{g}}); err != nil || !in.Wanted(g) {
		t.Fatalf("the same instance back: %v, wanted %v", err, in.Wanted(g))
	}
	in.RemovePeer("n")
	if err := in.Update("n", PeerState{Version: 4, Instance: inst(1), Groups: []GroupID{g}}); !errors.Is(err, ErrDeparted) {
		t.Fatalf("a removed instance: %v, want ErrDeparted", err)
	}
}
