package group

import (
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/rsbd/rsbd/transport/datagram"
)

func TestLocalSetRefCounting(t *testing.T) {
	l, err := NewLocalSet(Config{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := gid("/a/"), gid("/b/")
	if l.Version() != 1 || l.Len() != 0 {
		t.Fatalf("new set: version %d len %d", l.Version(), l.Len())
	}
	step := func(changed bool, wantChanged bool, wantVersion uint64) {
		t.Helper()
		if changed != wantChanged || l.Version() != wantVersion {
			t.Fatalf("changed %v version %d, want %v %d", changed, l.Version(), wantChanged, wantVersion)
		}
	}
	c, _ := l.Add(a)
	step(c, true, 2)
	c, _ = l.Add(a)
	step(c, false, 2)
	c, _ = l.Add(b)
	step(c, true, 3)
	step(l.Remove(a), false, 3)
	if !l.Contains(a) {
		t.Fatal("a dropped while referenced")
	}
	step(l.Remove(a), true, 4)
	step(l.Remove(a), false, 4)
	if l.Contains(a) || !l.Contains(b) || l.Len() != 1 {
		t.Fatal("contents wrong")
	}

	c, _ = l.Set([]GroupID{b})
	step(c, false, 4)
	c, _ = l.Set([]GroupID{a, b, a})
	step(c, true, 5)
	if l.Len() != 2 {
		t.Fatalf("Set with duplicates: len %d", l.Len())
	}
	step(l.Remove(a), true, 6) // Set gave one reference each

	addr := netip.MustParseAddrPort("127.0.0.1:9")
	_, _ = l.Add(a)
	st := l.Snapshot(inst(4), addr)
	if st.Version != 7 || st.Instance != inst(4) || st.Addr != addr || len(st.Groups) != 2 || !groupsAscending(st.Groups) {
		t.Fatalf("Snapshot = %+v", st)
	}
	if _, err := AppendPeerState(nil, &st); err != nil {
		t.Fatalf("snapshot not encodable: %v", err)
	}
}

func TestLocalSetLimit(t *testing.T) {
	l, err := NewLocalSet(Config{MaxGroupsPerPeer: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Add(gid("/a/")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Add(gid("/a/")); err != nil {
		t.Fatal("another reference on a present group must not hit the limit")
	}
	if _, err := l.Add(gid("/b/")); !errors.Is(err, ErrTooManyGroups) {
		t.Fatalf("Add over limit: %v", err)
	}
	if _, err := l.Set([]GroupID{gid("/a/"), gid("/b/")}); !errors.Is(err, ErrTooManyGroups) {
		t.Fatalf("Set over limit: %v", err)
	}
	if l.Len() != 1 || l.Version() != 2 {
		t.Fatal("failed calls changed the set")
	}
	if _, err := NewLocalSet(Config{MaxGroupsPerPeer: -1}); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad config: %v", err)
	}
}

// TestLocalSetSnapshotAfterEachChange: the snapshot, kept sorted by Set and
// rebuilt after Add and Remove, always lists the current groups in order.
func TestLocalSetSnapshotAfterEachChange(t *testing.T) {
	l, err := NewLocalSet(Config{})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := gid("/a/"), gid("/b/"), gid("/c/")
	check := func(want ...GroupID) {
		t.Helper()
		want = SortGroups(want)
		st := l.Snapshot(datagram.InstanceID{}, netip.AddrPort{})
		if !slices.Equal(st.Groups, want) || st.Version != l.Version() {
			t.Fatalf("snapshot %v (version %d), want %v (version %d)", st.Groups, st.Version, want, l.Version())
		}
		st.Groups[0] = GroupID{} // the snapshot is the caller's copy
	}
	if _, err := l.Set([]GroupID{c, a}); err != nil {
		t.Fatal(err)
	}
	check(a, c)
	if _, err := l.Add(b); err != nil {
		t.Fatal(err)
	}
	check(a, b, c)
	l.Remove(a)
	check(b, c)
	if _, err := l.Set([]GroupID{b, c}); err != nil {
		t.Fatal(err)
	}
	check(b, c)
	if _, err := l.Set([]GroupID{a}); err != nil {
		t.Fatal(err)
	}
	check(a)
}
