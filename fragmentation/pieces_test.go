package fragmentation

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/rsbpb"
	"github.com/rsbd/rsbd/scope"
)

// splitRaw is SplitPieces with each fragment's pieces joined: the bytes
// its datagrams carry.
func splitRaw(dst [][]byte, body []byte, capacity int) ([][]byte, error) {
	pieces, err := SplitPieces(nil, body, capacity)
	for _, p := range pieces {
		dst = append(dst, bytes.Join(p, nil))
	}
	return dst, err
}

// TestSplitPiecesAliasBody: the data pieces are the body's own bytes, in
// order, and only they are large.
func TestSplitPiecesAliasBody(t *testing.T) {
	body := splitTestBody(t, 1<<20)
	_, _, data, err := scanNotification(body)
	if err != nil {
		t.Fatal(err)
	}
	pieces, err := SplitPieces(nil, body, 60000)
	if err != nil {
		t.Fatal(err)
	}
	off := 0
	for i, p := range pieces {
		if len(p) != 3 || len(p[0]) > 200 || len(p[2]) > 100 {
			t.Fatalf("fragment %d: %d pieces, head %d, tail %d bytes", i, len(p), len(p[0]), len(p[2]))
		}
		if &p[1][0] != &data[off] {
			t.Fatalf("fragment %d: data piece is not the body's bytes at %d", i, off)
		}
		off += len(p[1])
	}
	if off != len(data) {
		t.Fatalf("pieces carry %d of %d data bytes", off, len(data))
	}
}

func splitTestBody(t testing.TB, size int) []byte {
	t.Helper()
	ev := &notification.Event{Scope: scope.MustParse("/split/me/"), Method: "REQUEST", WireSchema: "bytes",
		Data:   bytes.Repeat([]byte("0123456789"), size/10+1)[:size],
		ID:     notification.EventID{SenderID: [16]byte{7, 7}, SequenceNumber: 42},
		Causes: []notification.EventID{{SenderID: [16]byte{1}, SequenceNumber: 3}}}
	ev.MetaData.CreateTime, ev.MetaData.SendTime = 1, 2
	ev.MetaData.SetUserInfo("k", "v")
	b, err := notification.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSplitRawReassembles: the fragments fit the capacity, follow RSB's
// rule (only fragment 0 has the header) and reassemble, with the
// fragmentation package's Assembler, into the original Notification.
func TestSplitRawReassembles(t *testing.T) {
	for _, size := range []int{0, 1, 100, 1399, 5000, 65536, 1 << 20} {
		for _, capacity := range []int{300, 1400, 60000} {
			body := splitTestBody(t, size)
			frags, err := splitRaw(nil, body, capacity)
			if err != nil {
				t.Fatalf("size %d capacity %d: %v", size, capacity, err)
			}
			asm, err := NewAssembler(Config{MaxParts: 1 << 16})
			if err != nil {
				t.Fatal(err)
			}
			var got *rsbpb.Notification
			for i, f := range frags {
				if len(f) > capacity {
					t.Fatalf("size %d capacity %d: fragment %d has %d bytes", size, capacity, i, len(f))
				}
				var fn rsbpb.FragmentedNotification
				if err := proto.Unmarshal(f, &fn); err != nil {
					t.Fatalf("fragment %d: %v", i, err)
				}
				if i > 0 && (fn.Notification.Scope != nil || fn.Notification.MetaData != nil) {
					t.Fatalf("fragment %d carries header fields", i)
				}
				if got, err = asm.AddBytes(time.Unix(0, 0), f); err != nil {
					t.Fatalf("fragment %d: %v", i, err)
				}
			}
			var want rsbpb.Notification
			if err := proto.Unmarshal(body, &want); err != nil {
				t.Fatal(err)
			}
			if got == nil || !proto.Equal(got, &want) {
				t.Fatalf("size %d capacity %d: reassembled %v, want the original", size, capacity, got != nil)
			}
		}
	}
}

func TestSplitRawErrors(t *testing.T) {
	if _, err := splitRaw(nil, splitTestBody(t, 10), 40); !errors.Is(err, ErrHeaderTooLarge) {
		t.Fatalf("tiny capacity: %v", err)
	}
	if _, err := splitRaw(nil, []byte{0x0a, 0x05, 'a'}, 1000); !errors.Is(err, ErrNotification) {
		t.Fatalf("truncated input: %v", err)
	}
	if _, err := splitRaw(nil, []byte{0x32, 0x01, '/'}, 1000); !errors.Is(err, ErrNotification) {
		t.Fatalf("no event id: %v", err)
	}
}

// FuzzSplitRaw: splitting any bytes never panics; what it splits fits the
// capacity and, for a Notification that decodes, keeps the data.
func FuzzSplitRaw(f *testing.F) {
	f.Add(splitTestBody(f, 3000), 1400)
	f.Add(splitTestBody(f, 0), 100)
	f.Add([]byte{0xe2, 0x06, 0x00, 0x4a, 0x03, 'a', 'b', 'c'}, 30)
	f.Fuzz(func(t *testing.T, body []byte, capacity int) {
		capacity = 30 + capacity%70000
		if capacity < 0 {
			capacity = -capacity
		}
		frags, err := splitRaw(nil, body, capacity)
		if err != nil {
			return
		}
		for i, fr := range frags {
			if len(fr) > capacity {
				t.Fatalf("fragment %d: %d > %d bytes", i, len(fr), capacity)
			}
		}
		var n rsbpb.Notification
		if (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(body, &n) != nil {
			return // garbage in, the same garbage out: only sizes are checked
		}
		_, _, data, _ := scanNotification(body)
		var joined []byte
		for i, fr := range frags {
			if len(fr) > capacity {
				t.Fatalf("fragment %d: %d > %d bytes", i, len(fr), capacity)
			}
			var fn rsbpb.FragmentedNotification
			if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(fr, &fn); err != nil {
				t.Fatalf("fragment %d does not decode: %v", i, err)
			}
			joined = append(joined, fn.GetNotification().GetData()...)
		}
		if !bytes.Equal(joined, data) {
			t.Fatal("fragments lost data")
		}
		checkReassembled(t, frags, joined, &n)
	})
}

// checkReassembled: what a receiver makes of the fragments, fragment 0's
// Notification with the joined data and every fragment's event id, is
// what the generated decoder makes of the split body (want), repeated
// fields merged and unknown fields kept alike.
func checkReassembled(t *testing.T, frags [][]byte, joined []byte, want *rsbpb.Notification) {
	t.Helper()
	opts := proto.UnmarshalOptions{AllowPartial: true}
	var first rsbpb.FragmentedNotification
	if err := opts.Unmarshal(frags[0], &first); err != nil {
		t.Fatal(err)
	}
	got := first.GetNotification()
	if got.Data != nil {
		got.Data = append(got.Data[:0:0], joined...)
	}
	if !proto.Equal(got, want) {
		t.Fatalf("reassembled %v, want %v", got, want)
	}
	for i, fr := range frags[1:] {
		var fn rsbpb.FragmentedNotification
		if err := opts.Unmarshal(fr, &fn); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(fn.GetNotification().GetEventId(), want.GetEventId()) {
			t.Fatalf("fragment %d: event id %v, want %v", i+1, fn.GetNotification().GetEventId(), want.GetEventId())
		}
	}
}

// TestSplitRepeatedEventID: a body that repeats event_id (protobuf merges
// the occurrences) is split into fragments that each carry every
// occurrence, so that receivers decode the same id as the sender's daemon.
func TestSplitRepeatedEventID(t *testing.T) {
	body := splitTestBody(t, 5000)
	var part rsbpb.Notification
	part.EventId = &rsbpb.EventId{SenderId: bytes.Repeat([]byte{7}, 16)}
	more, err := proto.MarshalOptions{AllowPartial: true}.Marshal(&part)
	if err != nil {
		t.Fatal(err)
	}
	body = append(body, more...) // a second event_id: sender_id replaced, sequence number kept
	var want rsbpb.Notification
	if err := proto.Unmarshal(body, &want); err != nil {
		t.Fatal(err)
	}
	frags, err := splitRaw(nil, body, 1400)
	if err != nil || len(frags) < 2 {
		t.Fatalf("%d fragments, %v", len(frags), err)
	}
	var joined []byte
	for _, fr := range frags {
		var fn rsbpb.FragmentedNotification
		if err := proto.Unmarshal(fr, &fn); err != nil {
			t.Fatal(err)
		}
		joined = append(joined, fn.GetNotification().GetData()...)
	}
	checkReassembled(t, frags, joined, &want)
}

// TestSplitEventMatchesSplitRaw: fragments made from an event without
// serializing it whole are the bytes splitRaw makes of its serialization,
// with data, with empty present data and without data.
func TestSplitEventMatchesSplitRaw(t *testing.T) {
	base := &notification.Event{Scope: scope.MustParse("/split/ev/"), Method: "REPLY", WireSchema: "bytes",
		ID:     notification.EventID{SenderID: [16]byte{9}, SequenceNumber: 7},
		Causes: []notification.EventID{{SenderID: [16]byte{2}, SequenceNumber: 1}}}
	base.MetaData.CreateTime = 5
	base.MetaData.SetUserInfo("a", "b")
	for _, c := range []struct {
		name    string
		data    []byte
		present notification.Presence
	}{
		{"large", bytes.Repeat([]byte("abc"), 70000), 0},
		{"small", []byte("x"), 0},
		{"empty-present", nil, notification.HasData},
		{"absent", nil, 0},
	} {
		ev := *base
		ev.Data, ev.Present = c.data, c.present
		body, err := notification.Marshal(&ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, capacity := range []int{300, 60000} {
			want, err := splitRaw(nil, body, capacity)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := SplitEvent(nil, &ev, capacity)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s/%d: %d fragments, want %d", c.name, capacity, len(got), len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("%s/%d: fragment %d differs", c.name, capacity, i)
				}
			}
		}
	}
}

// TestPlanChunks: the chunks hold every byte, fit their limits, and keep
// the receiver's estimate (parts × the first chunk it sees, fragment 0's
// counted with the header) at or above the event and, when balanced, close.
func TestPlanChunks(t *testing.T) {
	for _, hdr := range []int{3, 80, 1000} {
		for _, rest := range []int{1300, 59900} {
			first := rest - hdr
			for _, n := range []int{1, first, first + 1, rest + 7, 2 * rest, 65536, 100001, 1 << 20, 5 << 20, 16 << 20} {
				parts, c0, c := planChunks(n, first, rest)
				if parts == 1 {
					if n > first || c0 != n {
						t.Fatalf("n %d first %d: one part of %d", n, first, c0)
					}
					continue
				}
				last := n - c0 - (parts-2)*c
				if want := 1 + (n-first+rest-1)/rest; parts != want {
					t.Fatalf("n %d: %d parts, want %d", n, parts, want)
				}
				if c0 > first || c > rest || c0 < 1 || last < 1 || last > c {
					t.Fatalf("n %d first %d rest %d: parts %d c0 %d c %d last %d", n, first, rest, parts, c0, c, last)
				}
				if parts*(c0+hdr) < n || (parts > 2 && parts*c < n) {
					t.Fatalf("n %d: estimates %d, %d below the event", n, parts*(c0+hdr), parts*c)
				}
				if balanced := c0 < first || c < rest; balanced && parts*(c0+hdr) > n+parts*(hdr+1) {
					t.Fatalf("n %d: balanced estimate %d far above", n, parts*(c0+hdr))
				}
			}
		}
	}
}

// TestSplitSizesReceiverBuffer: an event split for 60000-byte datagrams
// costs the receiving Assembler little more than its size, whichever
// fragment comes first.
func TestSplitSizesReceiverBuffer(t *testing.T) {
	for _, size := range []int{61000, 65536, 100000, 1 << 20} {
		body := splitTestBody(t, size)
		frags, err := splitRaw(nil, body, 60000)
		if err != nil {
			t.Fatal(err)
		}
		for _, order := range []string{"in order", "second first"} {
			asm, err := NewAssembler(Config{})
			if err != nil {
				t.Fatal(err)
			}
			seq := frags
			if order == "second first" && len(frags) > 2 {
				seq = append([][]byte{frags[1], frags[0]}, frags[2:]...)
			}
			var got *rsbpb.Notification
			for i, f := range seq {
				if got, err = asm.AddBytes(time.Unix(0, 0), f); err != nil {
					t.Fatal(err)
				}
				// Out of order, fragment 1 also waits aside until fragment 0 comes.
				held := 0
				if order == "second first" && i == 0 {
					held = len(seq[0])
				}
				if i < len(seq)-1 && asm.BufferedBytes() > size+held+size/50+4096 {
					t.Fatalf("%d bytes %s: %d buffered after %d fragments", size, order, asm.BufferedBytes(), i+1)
				}
			}
			if got == nil || len(got.Data) != size || cap(got.Data) > size+size/50+4096 {
				t.Fatalf("%d bytes %s: reassembled %v, capacity %d", size, order, got != nil, cap(got.GetData()))
			}
		}
	}
}

// TestScanRepeatedEventIDLinear: a hostile frame that repeats event_id
// many times is scanned in linear time: its occurrences are copied out of
// the frame once and appended to, not copied again at every repeat (a
// 1 MiB frame of 2-byte event_ids took 41 s that way, 11 ms this way).
// The appends double their buffer, so the allocations grow with the log of
// the repeats.
func TestScanRepeatedEventIDLinear(t *testing.T) {
	var body []byte
	for range 10000 {
		body = protowire.AppendTag(body, fieldEventID, protowire.BytesType)
		body = protowire.AppendBytes(body, []byte{1, 2})
	}
	var id []byte
	allocs := testing.AllocsPerRun(3, func() {
		var err error
		if _, id, _, err = scanNotification(body); err != nil {
			t.Fatal(err)
		}
	})
	if len(id) != len(body) {
		t.Fatalf("event_id of %d bytes, want all %d", len(id), len(body))
	}
	if allocs > 64 {
		t.Fatalf("%.0f allocations for 10 000 repeats, want a few dozen at most", allocs)
	}
}
