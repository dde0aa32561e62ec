package node

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/proto/rsbpb"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/transport/datagram"
)

// TestFragmentKey: the event id of every fragment of a split event, and
// none of fragments without a whole one.
func TestFragmentKey(t *testing.T) {
	frags, err := splitRaw(nil, splitTestBody(t, 5000), 1400)
	if err != nil {
		t.Fatal(err)
	}
	want := partialKey{sender: [16]byte{7, 7}, seq: 42}
	for i, f := range frags {
		if key, ok := fragmentKey(f); !ok || key != want {
			t.Fatalf("fragment %d: %v %v, want %v", i, key, ok, want)
		}
	}
	for name, b := range map[string][]byte{
		"empty":        nil,
		"no event id":  {0x0a, 0x03, 0x32, 0x01, '/'},
		"short sender": {0x0a, 0x08, 0xe2, 0x06, 0x05, 0x0a, 0x01, 0x01, 0x10, 0x02},
		"no seq":       append([]byte{0x0a, 0x15, 0xe2, 0x06, 0x12, 0x0a, 0x10}, make([]byte, 16)...),
		"truncated":    {0x0a, 0x10, 0xe2},
	} {
		if key, ok := fragmentKey(b); ok {
			t.Errorf("%s: key %v", name, key)
		}
	}
}

// FuzzFragmentKey: any bytes give an answer without panicking, and a key
// only when a protobuf decoder finds the same event id.
func FuzzFragmentKey(f *testing.F) {
	frags, err := splitRaw(nil, splitTestBody(f, 3000), 1400)
	if err != nil {
		f.Fatal(err)
	}
	for _, fr := range frags {
		f.Add(fr)
	}
	f.Add([]byte{0x0a, 0x10, 0xe2})
	f.Fuzz(func(t *testing.T, b []byte) {
		key, ok := fragmentKey(b)
		if !ok {
			return
		}
		var fn rsbpb.FragmentedNotification
		if (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(b, &fn) != nil {
			return // a scan of the fields needed accepts more than a full decode
		}
		id := fn.GetNotification().GetEventId()
		if string(id.GetSenderId()) != string(key.sender[:]) || id.GetSequenceNumber() != key.seq {
			t.Fatalf("key %v, decoder says %x/%d", key, id.GetSenderId(), id.GetSequenceNumber())
		}
	})
}

// TestPartialOrigins: an evicted event is reported once, with the
// datagrams that carried it, and its later fragments are known as
// evicted; a timed-out or completed event is forgotten without a report;
// the maps start over at their limit.
func TestPartialOrigins(t *testing.T) {
	p := partialOrigins{limit: 4}
	st := datagram.StreamKey{Group: datagram.GroupID{1}, Class: datagram.ReliableUnordered}
	a, b, c := partialKey{seq: 1}, partialKey{seq: 2}, partialKey{seq: 3}
	p.note(a, st, 10)
	p.note(a, st, 8)
	p.note(a, st, 12)
	p.note(b, st, 11)
	p.note(c, st, 13)
	p.done(c)
	l, ok := p.dropped(fragmentation.Drop{SequenceNumber: 1, Reason: fragmentation.ReasonEvictedBytes})
	if !ok || l.Stream != st || l.Range != (datagram.Range{First: 8, Last: 12}) || l.Reason != qos.ReasonReassemblyEvicted {
		t.Fatalf("eviction: %+v %v", l, ok)
	}
	if !p.wasEvicted(a) || p.wasEvicted(b) {
		t.Fatal("evicted set wrong")
	}
	if _, ok := p.dropped(fragmentation.Drop{SequenceNumber: 1, Reason: fragmentation.ReasonEvictedBytes}); ok {
		t.Fatal("an eviction reported twice")
	}
	if _, ok := p.dropped(fragmentation.Drop{SequenceNumber: 2, Reason: fragmentation.ReasonTimeout}); ok || len(p.m) != 0 {
		t.Fatalf("a timeout reported, or not forgotten: %d left", len(p.m))
	}
	if _, ok := p.dropped(fragmentation.Drop{SequenceNumber: 3, Reason: fragmentation.ReasonEvictedPartials}); ok {
		t.Fatal("a completed event reported")
	}
	for i := uint32(10); i < 20; i++ {
		p.note(partialKey{seq: i}, st, uint64(i))
	}
	if len(p.m) > p.limit {
		t.Fatalf("%d origins past the limit %d", len(p.m), p.limit)
	}
}
