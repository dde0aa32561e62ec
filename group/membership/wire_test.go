package membership

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"testing"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

func gid(s string) group.GroupID { return group.ID(scope.MustParse(s)) }

func TestMetaRoundTrip(t *testing.T) {
	for _, m := range []nodeMeta{
		{},
		{leaving: true, instance: datagram.InstanceID{1, 2, 3}, dataAddr: netip.MustParseAddrPort("192.0.2.1:55557")},
		{instance: datagram.InstanceID{9}, dataAddr: netip.MustParseAddrPort("[2001:db8::7]:1")},
		{instance: datagram.InstanceID{9}, dataAddr: netip.MustParseAddrPort("[::ffff:10.0.0.1]:2")},
	} {
		b := encodeMeta(m)
		got, err := decodeMeta(b)
		if err != nil {
			t.Fatal(err)
		}
		want := m
		want.dataAddr = netip.AddrPortFrom(m.dataAddr.Addr().Unmap(), m.dataAddr.Port())
		if got != want {
			t.Fatalf("meta round trip: got %+v, want %+v", got, want)
		}
	}
}

func TestMetaMalformed(t *testing.T) {
	good := encodeMeta(nodeMeta{instance: datagram.InstanceID{1}, dataAddr: netip.MustParseAddrPort("192.0.2.1:5")})
	mut := func(i int, v byte) []byte { b := bytes.Clone(good); b[i] = v; return b }
	cases := map[string][]byte{
		"empty":       nil,
		"short":       good[:metaLen-1],
		"long":        append(bytes.Clone(good), 0),
		"format":      mut(0, 2),
		"flags":       mut(1, 0x80),
		"family":      mut(18, 5),
		"ipv4 pad":    mut(30, 1),
		"no addr pad": mut(18, 0),
		"mapped v6":   encodeMapped(),
	}
	for name, b := range cases {
		if _, err := decodeMeta(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

// encodeMapped returns metadata holding an IPv4-mapped address under the
// IPv6 family, which encodeMeta never writes.
func encodeMapped() []byte {
	b := encodeMeta(nodeMeta{dataAddr: netip.MustParseAddrPort("[2001:db8::1]:5")})
	a := netip.MustParseAddr("::ffff:1.2.3.4").As16()
	copy(b[19:35], a[:])
	return b
}

func FuzzDecodeMeta(f *testing.F) {
	f.Add(encodeMeta(nodeMeta{}))
	f.Add(encodeMeta(nodeMeta{leaving: true, instance: datagram.InstanceID{1}, dataAddr: netip.MustParseAddrPort("192.0.2.1:5")}))
	f.Add(encodeMeta(nodeMeta{dataAddr: netip.MustParseAddrPort("[2001:db8::1]:5")}))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMeta(b)
		if err != nil {
			return
		}
		if again := encodeMeta(m); !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs:\n in  %x\n out %x", b, again)
		}
	})
}

func TestStateMsgRoundTrip(t *testing.T) {
	st := group.PeerState{Version: 3, Instance: datagram.InstanceID{4}, Groups: group.SortGroups([]group.GroupID{gid("/a/"), gid("/b/")})}
	b, err := appendStateMsg(nil, "node-1", &st)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != msgState {
		t.Fatalf("kind %d", b[0])
	}
	name, got, err := decodeStateMsg(b[1:])
	if err != nil || name != "node-1" || got.Version != 3 || len(got.Groups) != 2 {
		t.Fatalf("decode: %q %+v %v", name, got, err)
	}
	for _, bad := range [][]byte{nil, {0}, {5, 'a'}, b[1 : len(b)-1]} {
		if _, _, err := decodeStateMsg(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("decodeStateMsg(%x) = %v, want ErrMalformed", bad, err)
		}
	}
	if _, err := appendStateMsg(nil, "", &st); err == nil {
		t.Error("empty name encoded")
	}
	if _, err := appendStateMsg(nil, string(make([]byte, 256)), &st); err == nil {
		t.Error("256-byte name encoded")
	}
}

func TestLeavingMsg(t *testing.T) {
	inst := datagram.InstanceID{1, 2, 3}
	b, err := appendLeavingMsg(nil, "node", inst)
	if err != nil || b[0] != msgLeaving {
		t.Fatal(err)
	}
	name, got, err := decodeLeavingMsg(b[1:])
	if err != nil || name != "node" || got != inst {
		t.Fatalf("decode: %q %x %v", name, got, err)
	}
	for _, bad := range [][]byte{nil, b[1 : len(b)-1], append(bytes.Clone(b[1:]), 0)} {
		if _, _, err := decodeLeavingMsg(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("decodeLeavingMsg(%x) = %v", bad, err)
		}
	}
	if _, err := appendLeavingMsg(nil, "", inst); err == nil {
		t.Error("empty name encoded")
	}
}

func TestTableRoundTripAndBudget(t *testing.T) {
	states := map[string]group.PeerState{}
	w := newTableWriter(MaxPushPullBytes)
	for i := 0; i < 5; i++ {
		name := fmt.Sprint("peer-", i)
		st := group.PeerState{Version: uint64(i + 1), Instance: datagram.InstanceID{byte(i)}, Groups: []group.GroupID{gid(fmt.Sprintf("/t/%d/", i))}}
		states[name] = st
		w.add(name, &st)
	}
	b := w.bytes()
	seen := 0
	err := decodeTable(b[1:], 5, func(e tableEntry) {
		st, err := group.DecodePeerState(e.state)
		if err != nil || st.Version != states[e.name].Version || st.Groups[0] != states[e.name].Groups[0] {
			t.Errorf("entry %s: %+v %v", e.name, st, err)
		}
		seen++
	})
	if err != nil || seen != 5 {
		t.Fatalf("decodeTable: %v, %d entries", err, seen)
	}
	if err := decodeTable(b[1:], 4, func(tableEntry) {}); !errors.Is(err, ErrMalformed) {
		t.Errorf("entry limit: %v", err)
	}
	for _, cut := range []int{2, 5, 8, len(b) - 1} {
		if err := decodeTable(b[1:cut], 5, func(tableEntry) {}); !errors.Is(err, ErrMalformed) {
			t.Errorf("table cut at %d: %v", cut, err)
		}
	}
	if err := decodeTable(append(bytes.Clone(b[1:]), 0), 5, func(tableEntry) {}); !errors.Is(err, ErrMalformed) {
		t.Errorf("trailing byte: %v", err)
	}

	// A small budget keeps the entries that fit and counts the rest.
	small := newTableWriter(5 + 60)
	for name, st := range states {
		small.add(name, &st)
	}
	if small.count != 1 || small.skipped != 4 {
		t.Fatalf("budget: %d written, %d skipped", small.count, small.skipped)
	}
	unsorted := group.PeerState{Groups: []group.GroupID{gid("/b/"), gid("/a/")}}
	unsorted.Groups = append(unsorted.Groups, unsorted.Groups[0])
	w = newTableWriter(MaxPushPullBytes)
	w.add("x", &unsorted)
	w.add("", &group.PeerState{})
	if w.count != 0 || w.skipped != 2 || len(w.bytes()) != 5 {
		t.Fatalf("bad entries written: count %d skipped %d", w.count, w.skipped)
	}
}

// FuzzDecodeMessage feeds arbitrary bytes to the decoders of the user
// message kinds; they must never panic and must only accept what they can
// account for.
func FuzzDecodeMessage(f *testing.F) {
	st := group.PeerState{Version: 1, Instance: datagram.InstanceID{1}, Groups: []group.GroupID{gid("/f/")}}
	msg, _ := appendStateMsg(nil, "n", &st)
	f.Add(msg)
	w := newTableWriter(MaxPushPullBytes)
	w.add("n", &st)
	w.add("m", &group.PeerState{Version: 2})
	f.Add(w.bytes())
	f.Add([]byte{msgTable, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{msgState, 200})
	bye, _ := appendLeavingMsg(nil, "n", datagram.InstanceID{5})
	f.Add(bye)
	d := group.PeerDelta{Base: 1, Version: 3, Instance: datagram.InstanceID{1}, Added: []group.GroupID{gid("/g/")}, Removed: []group.GroupID{gid("/f/")}}
	delta, _ := appendDeltaMsg(nil, "n", &d)
	f.Add(delta)
	need, _ := appendNeedFullMsg(nil, "m", datagram.InstanceID{1})
	f.Add(need)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		switch b[0] {
		case msgState:
			name, st, err := decodeStateMsg(b[1:])
			if err == nil {
				again, err := appendStateMsg(nil, name, &st)
				if err != nil || !bytes.Equal(again, b) {
					t.Fatalf("state message not canonical: %v", err)
				}
			}
		case msgLeaving:
			name, inst, err := decodeLeavingMsg(b[1:])
			if err == nil {
				again, err := appendLeavingMsg(nil, name, inst)
				if err != nil || !bytes.Equal(again, b) {
					t.Fatalf("leaving message not canonical: %v", err)
				}
			}
		case msgStateDelta:
			name, d, err := decodeDeltaMsg(b[1:])
			if err == nil {
				again, err := appendDeltaMsg(nil, name, &d)
				if err != nil || !bytes.Equal(again, b) {
					t.Fatalf("delta message not canonical: %v", err)
				}
			}
		case msgStateNeedFull:
			name, inst, err := decodeNeedFullMsg(b[1:])
			if err == nil {
				again, err := appendNeedFullMsg(nil, name, inst)
				if err != nil || !bytes.Equal(again, b) {
					t.Fatalf("need-full message not canonical: %v", err)
				}
			}
		case msgTable:
			total := 5
			_ = decodeTable(b[1:], 16, func(e tableEntry) {
				total += 1 + len(e.name) + 4 + len(e.state)
				if total > len(b) {
					t.Fatalf("entries exceed the input")
				}
				_, _ = group.DecodePeerState(e.state)
			})
		}
	})
}
