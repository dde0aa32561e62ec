package qos

import (
	"testing"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// TestReceiverNackIntervalAdapts: a sender whose repairs take 40 ms is
// NACKed about every 80 ms, not every NackInterval, and a hole whose
// repair takes 300 ms (thirty NackIntervals) is waited for; the interval
// stops at NackIntervalMax. A receiver whose repairs come at once keeps
// NackInterval.
func TestReceiverNackIntervalAdapts(t *testing.T) {
	for _, class := range reliableClasses {
		r := newTestReceiver(t, class, ReceiverConfig{})
		var out Output
		now := simBase
		feed(r, now, &out, 1)
		seq := uint64(1)
		// Twenty holes, each repaired 40 ms after its first NACK.
		for i := 0; i < 20; i++ {
			seq += 2
			feed(r, now, &out, seq) // seq-1 is missing
			now = r.NextDeadline()
			out.Reset()
			r.Tick(now, &out)
			if len(nackRanges(&out)) != 1 {
				t.Fatalf("%s: hole %d not NACKed", className(class), seq-1)
			}
			now = now.Add(40 * time.Millisecond)
			r.Handle(dataFor(r.Key(), seq-1, datagram.FlagRepair), now, &out)
		}
		if got := r.nackInterval(); got < 70*time.Millisecond || got > 90*time.Millisecond {
			t.Fatalf("%s: NACK interval %v after repairs of 40 ms, want about 80 ms", className(class), got)
		}
		// A hole whose repair takes 300 ms: NACKed about every 80 ms, and
		// not given up.
		seq += 2
		feed(r, now, &out, seq)
		start := now
		nacks := 0
		for now.Sub(start) < 300*time.Millisecond {
			now = r.NextDeadline()
			out.Reset()
			r.Tick(now, &out)
			nacks += len(nackRanges(&out))
			if len(out.Losses) > 0 {
				t.Fatalf("%s: hole given up after %v: %+v", className(class), now.Sub(start), out.Losses)
			}
		}
		if nacks < 3 || nacks > 6 {
			t.Errorf("%s: %d NACKs in 300 ms", className(class), nacks)
		}
		r.Handle(dataFor(r.Key(), seq-1, datagram.FlagRepair), now, &out)
		if r.Edge() != seq+1 {
			t.Fatalf("%s: edge %d after the late repair, want %d", className(class), r.Edge(), seq+1)
		}
		for i := 0; i < 50; i++ {
			r.sampleRepair(10 * time.Second)
		}
		if got := r.nackInterval(); got != DefaultNackIntervalMax {
			t.Fatalf("%s: interval %v after very slow repairs, want the bound %v", className(class), got, DefaultNackIntervalMax)
		}
	}
	r := newTestReceiver(t, datagram.ReliableOrdered, ReceiverConfig{})
	r.sampleRepair(time.Millisecond)
	if got := r.nackInterval(); got != DefaultNackInterval {
		t.Fatalf("interval %v after a 1 ms repair, want %v", got, DefaultNackInterval)
	}
}
