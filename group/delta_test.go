package group

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/rsbd/rsbd/transport/datagram"
)

func testDelta() PeerDelta {
	return PeerDelta{Base: 3, Version: 5, Instance: datagram.InstanceID{7}, Addr: netip.MustParseAddrPort("192.0.2.1:5"),
		Added: SortGroups([]GroupID{gid("/x/"), gid("/y/")}), Removed: []GroupID{gid("/z/")}}
}

// TestPeerDeltaRoundTrip: a delta decodes to itself; what Append refuses
// has no encoding.
func TestPeerDeltaRoundTrip(t *testing.T) {
	d := testDelta()
	b, err := AppendPeerDelta(nil, &d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodePeerDelta(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Base != d.Base || got.Version != d.Version || got.Instance != d.Instance || got.Addr != d.Addr ||
		!slices.Equal(got.Added, d.Added) || !slices.Equal(got.Removed, d.Removed) {
		t.Fatalf("decoded %+v, want %+v", got, d)
	}
	for name, bad := range map[string]func(*PeerDelta){
		"no progress":  func(d *PeerDelta) { d.Version = d.Base },
		"unsorted":     func(d *PeerDelta) { d.Added[0], d.Added[1] = d.Added[1], d.Added[0] },
		"repeated":     func(d *PeerDelta) { d.Removed = append(d.Removed, d.Removed[0]) },
		"too many ids": func(d *PeerDelta) { d.Added = make([]GroupID, MaxEncodedGroups+1) },
	} {
		d := testDelta()
		bad(&d)
		if _, err := AppendPeerDelta(nil, &d); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: AppendPeerDelta gave %v, want ErrMalformed", name, err)
		}
	}
	if _, err := DecodePeerDelta(append(b, 0)); !errors.Is(err, ErrMalformed) {
		t.Errorf("trailing byte: %v", err)
	}
	for n := range len(b) {
		if _, err := DecodePeerDelta(b[:n]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
}

// TestPeerDeltaApply: a delta makes the next state of exactly the state it
// starts from and refuses any other.
func TestPeerDeltaApply(t *testing.T) {
	d := testDelta()
	base := PeerState{Version: 3, Instance: d.Instance, Groups: SortGroups([]GroupID{gid("/a/"), gid("/z/")})}
	got, err := d.Apply(base)
	if err != nil {
		t.Fatal(err)
	}
	want := SortGroups([]GroupID{gid("/a/"), gid("/x/"), gid("/y/")})
	if got.Version != 5 || got.Addr != d.Addr || !slices.Equal(got.Groups, want) {
		t.Fatalf("applied %+v, want version 5 and %v", got, want)
	}
	if len(base.Groups) != 2 {
		t.Fatal("Apply changed the state it was given")
	}
	for name, st := range map[string]PeerState{
		"other version":  {Version: 4, Instance: d.Instance, Groups: base.Groups},
		"other instance": {Version: 3, Instance: datagram.InstanceID{8}, Groups: base.Groups},
		"removed absent": {Version: 3, Instance: d.Instance, Groups: []GroupID{gid("/a/")}},
		"added present":  {Version: 3, Instance: d.Instance, Groups: SortGroups([]GroupID{gid("/x/"), gid("/z/")})},
	} {
		if _, err := d.Apply(st); !errors.Is(err, ErrDeltaBase) {
			t.Errorf("%s: Apply gave %v, want ErrDeltaBase", name, err)
		}
	}
}

// TestLocalSetDelta: after random adds, removes and replacements, the
// delta between any two versions the history covers turns the snapshot of
// the first into the snapshot of the second; versions past the history
// have none.
func TestLocalSetDelta(t *testing.T) {
	l, err := NewLocalSet(Config{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	ids := make([]GroupID, 40)
	for i := range ids {
		ids[i] = gid(fmt.Sprintf("/d/%d/", i))
	}
	snaps := map[uint64]PeerState{l.Version(): l.Snapshot(datagram.InstanceID{}, netip.AddrPort{})}
	for range 400 {
		switch r := rng.IntN(10); {
		case r < 5:
			_, _ = l.Add(ids[rng.IntN(len(ids))])
		case r < 9:
			l.Remove(ids[rng.IntN(len(ids))])
		default:
			var set []GroupID
			for _, id := range ids {
				if rng.IntN(3) == 0 {
					set = append(set, id)
				}
			}
			if _, err := l.Set(SortGroups(set)); err != nil {
				t.Fatal(err)
			}
		}
		snaps[l.Version()] = l.Snapshot(datagram.InstanceID{}, netip.AddrPort{})
	}
	checked := 0
	for base, from := range snaps {
		for v, to := range snaps {
			added, removed, ok := l.Delta(base, v)
			if v <= base {
				if ok {
					t.Fatalf("a delta from %d to %d", base, v)
				}
				continue
			}
			if !ok {
				if base >= l.historyFrom {
					t.Fatalf("no delta from %d to %d within the history (from %d)", base, v, l.historyFrom)
				}
				continue
			}
			d := PeerDelta{Base: base, Version: v, Added: added, Removed: removed}
			got, err := d.Apply(from)
			if err != nil || !slices.Equal(got.Groups, to.Groups) {
				t.Fatalf("delta %d → %d (+%d −%d) applied: %v, %v; want %v", base, v, len(added), len(removed), got.Groups, err, to.Groups)
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d deltas checked", checked)
	}
}

// TestLocalSetHistoryBound: the history keeps at most maxLocalHistory
// changes, and a delta from a version it no longer covers is refused.
func TestLocalSetHistoryBound(t *testing.T) {
	l, err := NewLocalSet(Config{})
	if err != nil {
		t.Fatal(err)
	}
	first := l.Version()
	for i := range maxLocalHistory + 10 {
		if _, err := l.Add(gid(fmt.Sprintf("/h/%d/", i))); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.history) > maxLocalHistory {
		t.Fatalf("history holds %d changes, bound %d", len(l.history), maxLocalHistory)
	}
	if _, _, ok := l.Delta(first, l.Version()); ok {
		t.Fatal("a delta from a version the history dropped")
	}
	if added, _, ok := l.Delta(l.Version()-5, l.Version()); !ok || len(added) != 5 {
		t.Fatalf("recent delta: %d added, ok %v", len(added), ok)
	}
}

func FuzzDecodePeerDelta(f *testing.F) {
	d := testDelta()
	b, _ := AppendPeerDelta(nil, &d)
	f.Add(b)
	empty := PeerDelta{Base: 1, Version: 2}
	b, _ = AppendPeerDelta(nil, &empty)
	f.Add(b)
	f.Add([]byte{})
	f.Add(append([]byte{1}, make([]byte, 40)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodePeerDelta(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		again, err := AppendPeerDelta(nil, &d)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs:\n in  %x\n out %x", b, again)
		}
	})
}
