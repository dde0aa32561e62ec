package transport

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"
)

var _ GatherConn = (*Endpoint)(nil)

// TestSendGather sends datagrams given as segments, in batches and to two
// destinations, and receives each as the concatenation of its segments.
func TestSendGather(t *testing.T) {
	t.Parallel()
	sb, sc := newSink(), newSink()
	a := open(t, Config{WriteBatch: 3}, func([]Packet) {})
	b, c := open(t, Config{}, sb.handle), open(t, Config{}, sc.handle)
	dst := []netip.AddrPort{unicastAddr(b), unicastAddr(c)}
	var dgrams [][][]byte
	var want []string
	for i := range 8 {
		var segs [][]byte
		s := ""
		for j := range i + 1 {
			seg := fmt.Appendf(nil, "<%d.%d>", i, j)
			segs = append(segs, seg)
			s += string(seg)
		}
		dgrams = append(dgrams, segs)
		want = append(want, s)
	}
	if err := a.SendGather(dst, dgrams...); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*sink{sb, sc} {
		for i := range dgrams {
			if p := s.next(t); string(p.Data) != want[i] {
				t.Fatalf("datagram %d: got %q, want %q", i, p.Data, want[i])
			}
		}
	}
	if s := a.Stats(); s.Sent != 16 || s.SendErrors != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestSendGatherValidates checks the limits SendGather enforces.
func TestSendGatherValidates(t *testing.T) {
	t.Parallel()
	e := open(t, Config{MaxDatagram: 100}, func([]Packet) {})
	ok := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:9")}
	if err := e.SendGather(ok, [][]byte{make([]byte, 60), make([]byte, 41)}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversize: %v", err)
	}
	if err := e.SendGather(ok, make([][]byte, MaxSegments+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("too many segments: %v", err)
	}
	bad := []netip.AddrPort{netip.MustParseAddrPort("[::1]:9")}
	if err := e.SendGather(bad, [][]byte{[]byte("x")}); !errors.Is(err, ErrAddress) {
		t.Fatalf("bad destination: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.SendGather(ok, [][]byte{[]byte("x")}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
