package group

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// testState returns a state with n ascending groups.
func testState(n int, addr string) PeerState {
	st := PeerState{Version: 42, Instance: datagram.InstanceID{1, 2, 3, 15: 16}}
	if addr != "" {
		st.Addr = netip.MustParseAddrPort(addr)
	}
	for i := 0; i < n; i++ {
		st.Groups = append(st.Groups, ID(scope.MustParse("/codec/"+string(rune('a'+i%26))+"/"+string(rune('a'+i/26))+"/")))
	}
	st.Groups = SortGroups(st.Groups)
	return st
}

func TestPeerStateRoundTrip(t *testing.T) {
	for _, st := range []PeerState{
		testState(0, ""),
		testState(1, "192.0.2.7:4000"),
		testState(3, "[2001:db8::1]:65535"),
		testState(200, "127.0.0.1:1"),
	} {
		b, err := AppendPeerState([]byte("prefix"), &st)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != len("prefix")+st.EncodedLen() {
			t.Fatalf("encoded %d bytes, EncodedLen says %d", len(b)-len("prefix"), st.EncodedLen())
		}
		got, err := DecodePeerState(b[len("prefix"):])
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != st.Version || got.Instance != st.Instance || got.Addr != st.Addr || len(got.Groups) != len(st.Groups) {
			t.Fatalf("round trip: got %+v, want %+v", got, st)
		}
		for i := range st.Groups {
			if got.Groups[i] != st.Groups[i] {
				t.Fatalf("group %d differs", i)
			}
		}
	}
}

func TestAppendPeerStateRejects(t *testing.T) {
	st := testState(3, "")
	st.Groups[0], st.Groups[1] = st.Groups[1], st.Groups[0]
	if _, err := AppendPeerState(nil, &st); !errors.Is(err, ErrMalformed) {
		t.Errorf("unsorted groups: %v", err)
	}
	st = testState(2, "")
	st.Groups[1] = st.Groups[0]
	if _, err := AppendPeerState(nil, &st); !errors.Is(err, ErrMalformed) {
		t.Errorf("duplicate groups: %v", err)
	}
	st = PeerState{Groups: make([]GroupID, MaxEncodedGroups+1)}
	if _, err := AppendPeerState(nil, &st); !errors.Is(err, ErrMalformed) {
		t.Errorf("too many groups: %v", err)
	}
	// A port without an address is not encoded.
	st = PeerState{Addr: netip.AddrPortFrom(netip.Addr{}, 99)}
	b, err := AppendPeerState(nil, &st)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodePeerState(b); err != nil || got.Addr.IsValid() || got.Addr.Port() != 0 {
		t.Fatalf("port without address: %+v %v", got, err)
	}
}

func TestDecodePeerStateMalformed(t *testing.T) {
	good := testState(2, "192.0.2.1:5")
	enc, _ := AppendPeerState(nil, &good)
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(enc)) }
	cases := map[string][]byte{
		"empty":          nil,
		"short header":   enc[:20],
		"format":         mut(func(b []byte) []byte { b[0] = 2; return b }),
		"family":         mut(func(b []byte) []byte { b[25] = 5; return b }),
		"truncated ipv4": enc[:28],
		"truncated port": enc[:31],
		"truncated cnt":  enc[:34],
		"count too big":  mut(func(b []byte) []byte { b[32], b[33] = 0xff, 0xff; return b }),
		"count mismatch": mut(func(b []byte) []byte { b[35]++; return b }),
		"trailing":       append(bytes.Clone(enc), 0),
		"short groups":   enc[:len(enc)-1],
		"unsorted":       mut(func(b []byte) []byte { copy(b[36:52], b[52:68]); return b }),
		"port no addr":   {1, 0, 0, 0, 0, 0, 0, 0, 1, 15: 0, 25: 0, 26: 0, 27: 7, 28: 0, 29: 0, 30: 0, 31: 0},
		"mapped ipv6":    mappedIPv6(enc),
		"truncated ipv6": {1, 24: 0, 25: 6, 26: 0},
	}
	for name, b := range cases {
		if _, err := DecodePeerState(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}

// mappedIPv6 rewrites the IPv4 address of enc as an IPv4-mapped IPv6 one.
func mappedIPv6(enc []byte) []byte {
	a := netip.AddrFrom16(netip.AddrFrom4([4]byte(enc[26:30])).As16())
	b16 := a.As16()
	out := append(bytes.Clone(enc[:25]), familyIPv6)
	out = append(out, b16[:]...)
	return append(out, enc[30:]...)
}

func FuzzDecodePeerState(f *testing.F) {
	for _, st := range []PeerState{testState(0, ""), testState(2, "192.0.2.1:5"), testState(1, "[2001:db8::2]:7")} {
		b, _ := AppendPeerState(nil, &st)
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff})
	f.Add(append(make([]byte, 32), 0xff, 0xff, 0xff, 0xff))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := DecodePeerState(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		// Every accepted input is canonical: it encodes back to itself.
		again, err := AppendPeerState(nil, &st)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs:\n in  %x\n out %x", b, again)
		}
	})
}

func BenchmarkDecodePeerState(b *testing.B) {
	st := testState(64, "192.0.2.1:5")
	enc, _ := AppendPeerState(nil, &st)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodePeerState(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSortGroupsOrder: SortGroups orders ids as CompareIDs does and drops
// repeats, on both sides of the length where it switches to word keys,
// including ids that differ only in their second word.
func TestSortGroupsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, sortKeysMin - 1, sortKeysMin, sortKeysMin + 1, 500} {
		ids := make([]GroupID, n)
		for i := range ids {
			binary.BigEndian.PutUint64(ids[i][:8], rng.Uint64()%8) // shared first words
			binary.BigEndian.PutUint64(ids[i][8:], rng.Uint64())
			if i > 0 && rng.IntN(5) == 0 {
				ids[i] = ids[rng.IntN(i)] // a repeat
			}
		}
		want := slices.Clone(ids)
		slices.SortFunc(want, func(a, b GroupID) int { return bytes.Compare(a[:], b[:]) })
		want = slices.Compact(want)
		if got := SortGroups(slices.Clone(ids)); !slices.Equal(got, want) {
			t.Fatalf("n=%d: SortGroups differs from a byte-wise sort", n)
		}
	}
}
