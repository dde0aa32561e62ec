package fragmentation

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// t0 is the test clock's origin; tests pass explicit times, never sleep.
var t0 = time.Unix(1_700_000_000, 0)

// sender returns a 16-byte sender id derived from b.
func sender(b byte) []byte {
	s := bytes.Repeat([]byte{b}, senderIDSize)
	s[0] = 0xd8
	return s
}

func eventID(s byte, seq uint32) *rsbpb.EventId {
	return &rsbpb.EventId{SenderId: sender(s), SequenceNumber: proto.Uint32(seq)}
}

// payload returns n deterministic bytes that differ per seed and position.
func payload(seed byte, n int) []byte {
	d := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range d {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		d[i] = byte(x)
	}
	return d
}

// minimalEvent has only an event id, a scope and data.
func minimalEvent(s byte, seq uint32, data []byte) *rsbpb.Notification {
	return &rsbpb.Notification{EventId: eventID(s, seq), Scope: []byte("/a/"), Data: data}
}

// richEvent fills every header field, so fragment 0 differs visibly from the
// others.
func richEvent(s byte, seq uint32, data []byte) *rsbpb.Notification {
	return &rsbpb.Notification{
		EventId:    eventID(s, seq),
		Scope:      []byte("/robot/arm/joint/"),
		Method:     []byte("REQUEST"),
		WireSchema: []byte(".rsb.protocol.EventId"),
		Data:       data,
		Causes:     []*rsbpb.EventId{eventID(s+1, 7), eventID(s+2, 1<<31)},
		MetaData: &rsbpb.EventMetaData{
			CreateTime: proto.Int64(1_700_000_000_000_000),
			SendTime:   proto.Int64(1_700_000_000_000_123),
			UserInfos:  []*rsbpb.UserInfo{{Key: []byte("rsb.wire-schema"), Value: []byte("bytes")}},
			UserTimes:  []*rsbpb.UserTime{{Key: []byte("request.send"), Timestamp: proto.Uint64(42)}},
		},
	}
}

func mustMarshal(tb testing.TB, m proto.Message) []byte {
	tb.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		tb.Fatalf("marshal: %v", err)
	}
	return b
}

func mustAssembler(tb testing.TB, cfg Config) *Assembler {
	tb.Helper()
	a, err := NewAssembler(cfg)
	if err != nil {
		tb.Fatalf("NewAssembler: %v", err)
	}
	return a
}

func mustAppendSplit(tb testing.TB, n *rsbpb.Notification, maxSize int) [][]byte {
	tb.Helper()
	frags, err := AppendSplit(nil, n, maxSize)
	if err != nil {
		tb.Fatalf("AppendSplit(max %d, data %d): %v", maxSize, len(n.Data), err)
	}
	return frags
}

// decodeFragment decodes one serialized fragment with protobuf.
func decodeFragment(tb testing.TB, b []byte) *rsbpb.FragmentedNotification {
	tb.Helper()
	f := new(rsbpb.FragmentedNotification)
	if err := proto.Unmarshal(b, f); err != nil {
		tb.Fatalf("unmarshal fragment: %v", err)
	}
	return f
}

// reencode returns fragment b with its counters (and optionally its
// Notification) changed by edit.
func reencode(tb testing.TB, b []byte, edit func(f *rsbpb.FragmentedNotification)) []byte {
	tb.Helper()
	f := decodeFragment(tb, b)
	edit(f)
	return mustMarshal(tb, f)
}

// feed offers frags in the given order and returns the completed events.
func feed(tb testing.TB, a *Assembler, now time.Time, frags [][]byte, order []int) []*rsbpb.Notification {
	tb.Helper()
	var out []*rsbpb.Notification
	for _, i := range order {
		n, err := a.AddBytes(now, frags[i])
		if err != nil {
			tb.Fatalf("AddBytes(fragment %d): %v", i, err)
		}
		if n != nil {
			out = append(out, n)
		}
	}
	return out
}

func identity(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = i
	}
	return o
}

// wantRefusal checks that err is a refusal for reason r.
func wantRefusal(tb testing.TB, err error, r Reason) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("no error, want refusal %v", r)
	}
	if got := ReasonOf(err); got != r {
		tb.Fatalf("error %v has reason %v, want %v", err, got, r)
	}
	var want error
	switch r {
	case ReasonDuplicate:
		want = ErrDuplicate
	case ReasonDecode:
		want = ErrDecode
	default:
		want = ErrDropped
	}
	if !errors.Is(err, want) {
		tb.Fatalf("error %v does not match %v", err, want)
	}
}

// checkBounds fails when a exceeds its configured bounds.
func checkBounds(tb testing.TB, a *Assembler) {
	tb.Helper()
	c := a.Config()
	if a.Len() > c.MaxPartialEvents {
		tb.Fatalf("%d partial events exceed %d", a.Len(), c.MaxPartialEvents)
	}
	if a.BufferedBytes() > c.MaxBufferedBytes || a.BufferedBytes() < 0 {
		tb.Fatalf("buffered %d bytes, bound %d", a.BufferedBytes(), c.MaxBufferedBytes)
	}
	if a.Len() == 0 && a.BufferedBytes() != 0 {
		tb.Fatalf("no partial events but %d bytes charged", a.BufferedBytes())
	}
}
