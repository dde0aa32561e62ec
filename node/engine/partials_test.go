package engine

import (
	"bytes"
	"testing"
	"time"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/transport/datagram"
)

// TestPartialOrigins: an evicted event is reported once, with the
// datagrams that carried it; a timed-out or completed event is forgotten without a report;
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

// TestFragmentRefusalsAreCounted: fragments the assemblers refuse without
// a drop record of their own are counted by reason: a repeat, and the
// later fragments of an event dropped before, which no longer start a
// partial event.
func TestFragmentRefusalsAreCounted(t *testing.T) {
	for name, class := range map[string]datagram.Class{"unreliable": datagram.UnreliableUnordered, "reliable": datagram.ReliableOrdered} {
		t.Run(name, func(t *testing.T) {
			e, env := newTestEngine(t, nil)
			frags, _, err := fragmentation.SplitEvent(nil, testutil.Event("/split/me/", 42, bytes.Repeat([]byte("0123456789"), 500)), 1400)
			if err != nil || len(frags) < 3 {
				t.Fatalf("%d fragments, %v", len(frags), err)
			}
			st := datagram.StreamKey{Group: datagram.GroupID{9}, Class: class}
			now := time.Now()
			e.mu.Lock()
			for i, f := range [][]byte{frags[0], frags[0]} {
				e.deliverRecords(qos.Delivery{Stream: st, Seq: uint64(i + 1), Records: [][]byte{f}}, now)
			}
			late := now.Add(time.Hour) // the partial event has expired
			for i, f := range frags[1:] {
				e.deliverRecords(qos.Delivery{Stream: st, Seq: uint64(i + 3), Records: [][]byte{f}}, late)
			}
			held, delivered := e.asmRel.Len()+e.asmUnrel.Len(), len(e.dl)
			e.mu.Unlock()
			if held != 0 || delivered != 0 {
				t.Fatalf("%d partial events held, %d deliveries", held, delivered)
			}
			for reason, want := range map[string]float64{"fragment_duplicate": 1, "reassembly_timeout": 1,
				"fragment_after_drop": float64(len(frags) - 1)} {
				if got := env.drops(t, reason); got != want {
					t.Errorf("drops{reason=%s} = %v, want %v", reason, got, want)
				}
			}
		})
	}
}
