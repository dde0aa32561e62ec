package qos

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

func newTestReceiver(t testing.TB, class datagram.Class, cfg ReceiverConfig) *Receiver {
	t.Helper()
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(1, 2))
	}
	r, err := NewReceiver(testLocal, testKey(class), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// seqRecord is the record a test datagram with seq carries.
func seqRecord(seq uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte("rec:"), seq)
}

func dataFor(key datagram.StreamKey, seq uint64, flags datagram.Flags) *datagram.Datagram {
	return &datagram.Datagram{Kind: datagram.KindData, Flags: flags, Stream: key, Seq: seq,
		Records: [][]byte{seqRecord(seq)}}
}

// feed hands r DATA datagrams with the given numbers at now.
func feed(r *Receiver, now time.Time, out *Output, seqs ...uint64) {
	for _, seq := range seqs {
		r.Handle(dataFor(r.Key(), seq, 0), now, out)
	}
}

// deliveredSeqs lists out's deliveries, checking each record.
func deliveredSeqs(t testing.TB, out *Output) []uint64 {
	t.Helper()
	var seqs []uint64
	for _, d := range out.Deliveries {
		if len(d.Records) != 1 || string(d.Records[0]) != string(seqRecord(d.Seq)) {
			t.Fatalf("seq %d delivered with records %q", d.Seq, d.Records)
		}
		seqs = append(seqs, d.Seq)
	}
	return seqs
}

func nackRanges(out *Output) [][]datagram.Range {
	var r [][]datagram.Range
	for _, d := range out.Datagrams {
		if d.Kind == datagram.KindNack {
			r = append(r, d.Ranges)
		}
	}
	return r
}

func TestReceiverDeliveryRules(t *testing.T) {
	input := []uint64{1, 3, 2, 2, 5, 4, 6}
	tests := []struct {
		class           datagram.Class
		want            []uint64
		dups, late, gap uint64
	}{
		{datagram.UnreliableUnordered, []uint64{1, 3, 2, 5, 4, 6}, 1, 0, 0},
		{datagram.UnreliableOrdered, []uint64{1, 3, 5, 6}, 0, 3, 2},
		{datagram.ReliableUnordered, []uint64{1, 3, 2, 5, 4, 6}, 1, 0, 0},
		{datagram.ReliableOrdered, []uint64{1, 2, 3, 4, 5, 6}, 1, 0, 0},
	}
	for _, tt := range tests {
		r := newTestReceiver(t, tt.class, ReceiverConfig{})
		var out Output
		feed(r, simBase, &out, input...)
		got := deliveredSeqs(t, &out)
		st := r.Stats()
		if !equalSeqs(got, tt.want) || st.Duplicates != tt.dups || st.LateDrops != tt.late || st.UnreliableLost != tt.gap {
			t.Errorf("%s: delivered %v dups %d late %d lost %d, want %v %d %d %d", className(tt.class),
				got, st.Duplicates, st.LateDrops, st.UnreliableLost, tt.want, tt.dups, tt.late, tt.gap)
		}
		if r.Edge() != 7 || len(out.Losses) != 0 {
			t.Errorf("%s: edge %d, losses %v", className(tt.class), r.Edge(), out.Losses)
		}
	}
}

func TestReceiverLateJoin(t *testing.T) {
	for _, class := range allClasses {
		r := newTestReceiver(t, class, ReceiverConfig{CatchUp: -1})
		var out Output
		r.Handle(dataFor(r.Key(), 50, datagram.FlagRepair), simBase, &out) // someone else's repair
		feed(r, simBase, &out, 100, 99, 101)
		if got := deliveredSeqs(t, &out); !equalSeqs(got, []uint64{100, 101}) || r.Start() != 100 ||
			r.Stats().BeforeStart != 2 || len(out.Datagrams) != 0 || !r.NextDeadline().IsZero() {
			t.Errorf("%s: delivered %v start %d stats %+v", className(class), got, r.Start(), r.Stats())
		}
	}
}

// TestReceiverCatchUpYoungStream: a reliable receiver whose first datagram
// of a young stream is not the first one takes the stream from its start,
// NACKs what it missed and delivers it; past CatchUp it joins where it is.
func TestReceiverCatchUpYoungStream(t *testing.T) {
	for _, class := range allClasses {
		r := newTestReceiver(t, class, ReceiverConfig{CatchUp: 8})
		var out Output
		feed(r, simBase, &out, 3, 4)
		wantStart := uint64(1)
		if !class.Reliable() {
			wantStart = 3
		}
		if r.Start() != wantStart {
			t.Errorf("%s: start %d, want %d", className(class), r.Start(), wantStart)
		}
		if class.Reliable() {
			r.Tick(simBase.Add(time.Second), &out)
			if n := nackedSeqs(&out); !equalSeqs(n, []uint64{1, 2}) {
				t.Errorf("%s: NACKed %v, want [1 2]", className(class), n)
			}
		}
		old := newTestReceiver(t, class, ReceiverConfig{CatchUp: 8})
		feed(old, simBase, &out, 9)
		if old.Start() != 9 {
			t.Errorf("%s: joined a stream at 9 with CatchUp 8 but started at %d", className(class), old.Start())
		}
	}
}

// TestReceiverYoungHeartbeatOpens: when every datagram of a young reliable
// stream was lost, its heartbeat starts the receiver and the hole is NACKed.
func TestReceiverYoungHeartbeatOpens(t *testing.T) {
	tb := newTestTable(t, ReceiversConfig{})
	key := groupKey(2, datagram.ReliableUnordered)
	var out Output
	tb.Handle(&datagram.Datagram{Kind: datagram.KindHeartbeat, Stream: key, Trail: 1, Highest: 2}, simBase, &out)
	if tb.Len() != 1 {
		t.Fatalf("young heartbeat opened %d streams", tb.Len())
	}
	tb.Tick(simBase.Add(time.Second), &out)
	if n := nackedSeqs(&out); !equalSeqs(n, []uint64{1, 2}) {
		t.Fatalf("NACKed %v, want [1 2]", n)
	}
}

// nackedSeqs lists the sequence numbers asked for by the NACKs in out.
func nackedSeqs(out *Output) []uint64 {
	var seqs []uint64
	for _, d := range out.Datagrams {
		if d.Kind != datagram.KindNack {
			continue
		}
		for _, rg := range d.Ranges {
			for s := rg.First; s <= rg.Last; s++ {
				seqs = append(seqs, s)
			}
		}
	}
	return seqs
}

func TestReceiverNackCycle(t *testing.T) {
	r := newTestReceiver(t, datagram.ReliableUnordered, ReceiverConfig{})
	var out Output
	feed(r, simBase, &out, 1, 5)
	due := r.NextDeadline()
	if d := due.Sub(simBase); d < 0 || d > DefaultNackBackoff {
		t.Fatalf("first NACK due after %v, want within the back-off", d)
	}
	out.Reset()
	r.Tick(due, &out)
	nack := out.Datagrams[0]
	if len(out.Datagrams) != 1 || nack.Kind != datagram.KindNack || nack.Target != testSender ||
		nack.Stream != (datagram.StreamKey{Instance: testLocal, Group: testGroup, Class: datagram.ReliableUnordered}) ||
		len(nack.Ranges) != 1 || nack.Ranges[0] != (datagram.Range{First: 2, Last: 4}) {
		t.Fatalf("NACK %+v", out.Datagrams)
	}
	if r.NextDeadline() != due.Add(DefaultNackInterval) {
		t.Errorf("retry at %v, want +10ms", r.NextDeadline().Sub(due))
	}
	// A repair in the middle splits the hole; the retry asks for the rest.
	r.Handle(dataFor(r.Key(), 3, datagram.FlagRepair), due, &out)
	out.Reset()
	r.Tick(r.NextDeadline(), &out)
	if got := nackRanges(&out); len(got) != 1 || len(got[0]) != 2 || got[0][0].Last != 2 || got[0][1].First != 4 {
		t.Errorf("retry NACK %v, want [2,2] [4,4]", got)
	}
	if st := r.Stats(); st.RepairsReceived != 1 || st.NacksSent != 2 || st.NackRanges != 3 {
		t.Errorf("stats %+v", st)
	}
}

// giveUp feeds r datagrams 1, 3 and 4 and ticks it at its deadlines until it
// gives hole 2 up (no repair ever comes); it returns when it did.
func giveUp(t *testing.T, r *Receiver, out *Output) time.Time {
	t.Helper()
	feed(r, simBase, out, 1, 3, 4)
	var now time.Time
	for i := 0; i < 100 && len(out.Losses) == 0; i++ {
		now = r.NextDeadline()
		r.Tick(now, out)
	}
	l := out.Losses
	if len(l) != 1 || l[0].Range != (datagram.Range{First: 2, Last: 2}) || l[0].Reason != ReasonRetriesExhausted {
		t.Fatalf("losses %+v after %d NACKs", l, r.Stats().NacksSent)
	}
	if got := deliveredSeqs(t, out); !equalSeqs(got, []uint64{1, 3, 4}) || r.Edge() != 5 || !r.NextDeadline().IsZero() {
		t.Errorf("delivered %v edge %d", got, r.Edge())
	}
	return now
}

// TestReceiverRetriesExhausted: a hole the sender never repairs is given up
// after NackTries NACKs and GiveUpAfter, whichever comes last.
func TestReceiverRetriesExhausted(t *testing.T) {
	for _, class := range reliableClasses {
		// The default: ten NACKs at the interval take 100 ms, then they come
		// at a doubling interval until a second has passed.
		r := newTestReceiver(t, class, ReceiverConfig{})
		var out Output
		took := giveUp(t, r, &out).Sub(simBase)
		if took < DefaultGiveUpAfter || took > DefaultGiveUpAfter+DefaultNackIntervalMax+DefaultNackBackoff {
			t.Errorf("%s: gave up after %v, want %v plus at most one NACK interval", className(class), took, DefaultGiveUpAfter)
		}
		if n := r.Stats().NacksSent; n <= DefaultNackTries || n > DefaultNackTries+10 {
			t.Errorf("%s: %d NACKs, want a few more than %d", className(class), n, DefaultNackTries)
		}
		// Without the floor the count decides: about 100 ms.
		r = newTestReceiver(t, class, ReceiverConfig{GiveUpAfter: time.Nanosecond})
		out = Output{}
		took = giveUp(t, r, &out).Sub(simBase)
		if took < 100*time.Millisecond || took > 103*time.Millisecond || r.Stats().NacksSent != DefaultNackTries {
			t.Errorf("%s: gave up after %v and %d NACKs, want about 100ms and %d", className(class), took, r.Stats().NacksSent, DefaultNackTries)
		}
	}
}

// TestReceiverWaitsForStarvedSender: a sender that answers none of the
// NACKs for 600 ms (starved of CPU) and then repairs the hole is not given
// up on, though the receiver's NACK count ran out long before.
func TestReceiverWaitsForStarvedSender(t *testing.T) {
	for _, class := range reliableClasses {
		r := newTestReceiver(t, class, ReceiverConfig{})
		var out Output
		feed(r, simBase, &out, 1, 3, 4)
		stall := simBase.Add(600 * time.Millisecond)
		for now := r.NextDeadline(); !now.IsZero() && !now.After(stall); now = r.NextDeadline() {
			r.Tick(now, &out)
		}
		if n := r.Stats().NacksSent; n <= DefaultNackTries {
			t.Fatalf("%s: %d NACKs in 600ms, want more than %d", className(class), n, DefaultNackTries)
		}
		r.Handle(dataFor(r.Key(), 2, datagram.FlagRepair), stall, &out)
		if len(out.Losses) != 0 {
			t.Fatalf("%s: losses %+v", className(class), out.Losses)
		}
		if got := deliveredSeqs(t, &out); !equalSeqs(slices.Sorted(slices.Values(got)), []uint64{1, 2, 3, 4}) || r.Edge() != 5 || !r.NextDeadline().IsZero() {
			t.Errorf("%s: delivered %v edge %d", className(class), got, r.Edge())
		}
	}
}

func TestReceiverNackSuppression(t *testing.T) {
	r := newTestReceiver(t, datagram.ReliableOrdered, ReceiverConfig{})
	var out Output
	feed(r, simBase, &out, 1, 5)
	heard := nackFor(r.Key(), datagram.Range{First: 2, Last: 4})
	own := nackFor(r.Key(), datagram.Range{First: 2, Last: 4})
	own.Stream.Instance = testLocal // our own NACK looped back: no effect
	r.Handle(own, simBase, &out)
	if r.Stats().Ignored != 1 {
		t.Errorf("own NACK not ignored")
	}
	r.Handle(heard, simBase, &out)
	due := r.NextDeadline()
	if d := due.Sub(simBase); d < DefaultNackInterval || d > DefaultNackInterval+DefaultNackBackoff {
		t.Fatalf("after a heard NACK the hole is due in %v, want 10-12ms", d)
	}
	r.Tick(simBase.Add(DefaultNackBackoff), &out)
	if len(out.Datagrams) != 0 || r.Stats().NacksSuppressed != 1 {
		t.Errorf("NACK not suppressed: %d datagrams", len(out.Datagrams))
	}
	// The repair does not come: this receiver asks itself at the retry.
	r.Tick(due, &out)
	if got := nackRanges(&out); len(got) != 1 {
		t.Errorf("no NACK at the retry: %v", got)
	}
	// A heard NACK covering only part of a hole does not suppress it.
	r2 := newTestReceiver(t, datagram.ReliableOrdered, ReceiverConfig{})
	feed(r2, simBase, &out, 1, 9)
	r2.Handle(heard, simBase, &out)
	if r2.Stats().NacksSuppressed != 0 || r2.NextDeadline().Sub(simBase) > DefaultNackBackoff {
		t.Errorf("partial NACK suppressed the hole")
	}
}

func TestReceiverNackRangesCapped(t *testing.T) {
	r := newTestReceiver(t, datagram.ReliableUnordered, ReceiverConfig{})
	var out Output
	for seq := uint64(1); seq <= 201; seq += 2 {
		feed(r, simBase, &out, seq) // holes at every even number
	}
	out.Reset()
	r.Tick(simBase.Add(DefaultNackBackoff), &out)
	got := nackRanges(&out)
	if len(got) != 2 || len(got[0]) != MaxNackRanges || len(got[1]) != 100-MaxNackRanges {
		t.Fatalf("NACKs of %d and %d ranges, want 64 and 36", len(got[0]), len(got[len(got)-1]))
	}
	want := uint64(2)
	for _, ranges := range got {
		for _, rg := range ranges {
			if rg.First != want || rg.Last != want {
				t.Fatalf("range %v, want [%d,%d]", rg, want, want)
			}
			want += 2
		}
	}
}

func TestReceiverHeartbeatAndGone(t *testing.T) {
	r := newTestReceiver(t, datagram.ReliableUnordered, ReceiverConfig{})
	key := r.Key()
	var out Output
	feed(r, simBase, &out, 1, 2, 3)
	// Tail loss: the heartbeat announces 5.
	r.Handle(&datagram.Datagram{Kind: datagram.KindHeartbeat, Stream: key, Trail: 1, Highest: 5}, simBase, &out)
	if r.Gaps() != 1 || r.NextDeadline().IsZero() {
		t.Fatalf("tail loss not noticed: %d gaps", r.Gaps())
	}
	// The trail moves past 4: lost; 5 still repairable.
	r.Handle(&datagram.Datagram{Kind: datagram.KindHeartbeat, Stream: key, Trail: 5, Highest: 5}, simBase, &out)
	// GONE for 5.
	r.Handle(&datagram.Datagram{Kind: datagram.KindGone, Stream: key, Ranges: []datagram.Range{{First: 5, Last: 9}}}, simBase, &out)
	want := []LossReport{
		{Stream: key, Range: datagram.Range{First: 4, Last: 4}, Reason: ReasonTrailPassed, At: simBase},
		{Stream: key, Range: datagram.Range{First: 5, Last: 5}, Reason: ReasonGone, At: simBase},
	}
	if len(out.Losses) != 2 || out.Losses[0] != want[0] || out.Losses[1] != want[1] {
		t.Errorf("losses %+v, want %+v", out.Losses, want)
	}
	if r.Edge() != 6 || r.Gaps() != 0 || !r.NextDeadline().IsZero() {
		t.Errorf("edge %d gaps %d", r.Edge(), r.Gaps())
	}
	st := r.Stats()
	if st.LossReports[ReasonTrailPassed] != 1 || st.LostDatagrams[ReasonGone] != 1 || st.Heartbeats != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestReceiverOrderedLossesInSequence(t *testing.T) {
	r := newTestReceiver(t, datagram.ReliableOrdered, ReceiverConfig{})
	key := r.Key()
	var out Output
	feed(r, simBase, &out, 1, 3, 5)
	gone := func(first, last uint64) {
		r.Handle(&datagram.Datagram{Kind: datagram.KindGone, Stream: key,
			Ranges: []datagram.Range{{First: first, Last: last}}}, simBase, &out)
	}
	gone(4, 4)
	if len(out.Losses) != 0 || r.Held() != 2 {
		t.Fatalf("loss of 4 reported before 2 was resolved: %+v", out.Losses)
	}
	gone(2, 2)
	if len(out.Losses) != 2 || out.Losses[0].Range.First != 2 || out.Losses[1].Range.First != 4 {
		t.Errorf("losses %+v, want 2 then 4", out.Losses)
	}
	if got := deliveredSeqs(t, &out); !equalSeqs(got, []uint64{1, 3, 5}) || r.Held() != 0 || r.HeldBytes() != StreamOverhead {
		t.Errorf("delivered %v, held %d (%d bytes)", got, r.Held(), r.HeldBytes())
	}
}

func TestReceiverGapOverflow(t *testing.T) {
	r := newTestReceiver(t, datagram.ReliableUnordered, ReceiverConfig{MaxGaps: 4})
	var out Output
	feed(r, simBase, &out, 1, 3, 5, 7, 9, 11)
	if r.Gaps() != 4 || len(out.Losses) != 1 || out.Losses[0].Range.First != 2 || out.Losses[0].Reason != ReasonGapOverflow {
		t.Errorf("gaps %d, losses %+v", r.Gaps(), out.Losses)
	}
}

func TestReceiverReorderOverflow(t *testing.T) {
	r := newTestReceiver(t, datagram.ReliableOrdered, ReceiverConfig{ReorderDatagrams: 3})
	var out Output
	feed(r, simBase, &out, 1, 3, 4, 5)
	if r.Held() != 3 || len(out.Losses) != 0 {
		t.Fatalf("held %d", r.Held())
	}
	feed(r, simBase, &out, 6)
	if len(out.Losses) != 1 || out.Losses[0].Range != (datagram.Range{First: 2, Last: 2}) ||
		out.Losses[0].Reason != ReasonReorderOverflow {
		t.Errorf("losses %+v", out.Losses)
	}
	if got := deliveredSeqs(t, &out); !equalSeqs(got, []uint64{1, 3, 4, 5, 6}) || r.Held() != 0 {
		t.Errorf("delivered %v", got)
	}
	r = newTestReceiver(t, datagram.ReliableOrdered, ReceiverConfig{ReorderBytes: 2 * (heldOverhead + recordOverhead + 12)})
	out.Reset()
	feed(r, simBase, &out, 1, 3, 4, 5)
	if r.Held() != 0 || len(out.Losses) != 1 || out.Losses[0].Reason != ReasonReorderOverflow {
		t.Errorf("byte bound: held %d, losses %+v", r.Held(), out.Losses)
	}
}

// TestReceiverHoldsCopies overwrites each input datagram's records after
// Handle, as a reused receive buffer would be.
func TestReceiverHoldsCopies(t *testing.T) {
	r := newTestReceiver(t, datagram.ReliableOrdered, ReceiverConfig{})
	var out Output
	for _, seq := range []uint64{1, 4, 3, 2} {
		d := dataFor(r.Key(), seq, 0)
		r.Handle(d, simBase, &out)
		// Check what was delivered now, then scribble over the input.
		deliveredSeqs(t, &out)
		out.Reset()
		for i := range d.Records[0] {
			d.Records[0][i] = 0xEE
		}
	}
	if r.Edge() != 5 || r.Stats().Delivered != 4 {
		t.Errorf("edge %d delivered %d", r.Edge(), r.Stats().Delivered)
	}
}

func TestReceiverClose(t *testing.T) {
	r := newTestReceiver(t, datagram.ReliableOrdered, ReceiverConfig{})
	var out Output
	feed(r, simBase, &out, 1, 3, 6)
	r.Close(simBase, &out)
	if got := deliveredSeqs(t, &out); !equalSeqs(got, []uint64{1, 3, 6}) || len(out.Losses) != 2 ||
		out.Losses[1].Range != (datagram.Range{First: 4, Last: 5}) || out.Losses[1].Reason != ReasonStreamClosed {
		t.Errorf("delivered %v, losses %+v", got, out.Losses)
	}
	if r.Gaps() != 0 || r.Held() != 0 || !r.NextDeadline().IsZero() {
		t.Errorf("state left: %d gaps, %d held", r.Gaps(), r.Held())
	}
}

func TestReceiverIgnoresInvalid(t *testing.T) {
	for _, class := range allClasses {
		r := newTestReceiver(t, class, ReceiverConfig{})
		key := r.Key()
		var out Output
		other := key
		other.Group[0]++
		bad := []*datagram.Datagram{
			dataFor(other, 1, 0),
			dataFor(key, 0, 0),
			dataFor(key, math.MaxUint64, 0),
			{Kind: 99, Stream: key},
			{Kind: datagram.KindHeartbeat, Stream: key, Trail: 9, Highest: 5},
			{Kind: datagram.KindHeartbeat, Stream: key, Trail: 1, Highest: math.MaxUint64},
		}
		for _, d := range bad {
			r.Handle(d, simBase, &out)
		}
		if st := r.Stats(); st.Ignored != uint64(len(bad)) || st.Delivered != 0 || r.Edge() != 0 {
			t.Errorf("%s: ignored %d of %d, delivered %d", className(class), st.Ignored, len(bad), st.Delivered)
		}
		// Near the top of the sequence space nothing wraps.
		feed(r, simBase, &out, MaxSeq-1, MaxSeq)
		r.Handle(&datagram.Datagram{Kind: datagram.KindHeartbeat, Stream: key, Trail: MaxSeq + 1, Highest: MaxSeq}, simBase, &out)
		if got := deliveredSeqs(t, &out); len(got) != 2 || r.Edge() != MaxSeq+1 {
			t.Errorf("%s: top of sequence space: delivered %v edge %d", className(class), got, r.Edge())
		}
	}
}

func TestReceiverUnreliableWindow(t *testing.T) {
	r := newTestReceiver(t, datagram.UnreliableUnordered, ReceiverConfig{})
	var out Output
	feed(r, simBase, &out, 1, 2000, 1500, 1500, 500)
	st := r.Stats()
	if got := deliveredSeqs(t, &out); !equalSeqs(got, []uint64{1, 2000, 1500}) ||
		st.Duplicates != 1 || st.LateDrops != 1 || st.UnreliableLost != 2000-DedupWindow-1 {
		t.Errorf("delivered %v, stats %+v", got, st)
	}
	// Sliding on counts what leaves the window undelivered: all of it but 1500.
	feed(r, simBase, &out, 2000+DedupWindow)
	if st := r.Stats(); st.UnreliableLost != 1998-1 {
		t.Errorf("lost %d after the slide, want %d", st.UnreliableLost, 1998-1)
	}
}
