package qos

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

func newTestTable(t *testing.T, cfg ReceiversConfig) *Receivers {
	t.Helper()
	cfg.Receiver.Rand = rand.New(rand.NewPCG(3, 4))
	tb, err := NewReceivers(testLocal, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// groupKey is a stream of testSender on group g.
func groupKey(g byte, class datagram.Class) datagram.StreamKey {
	return datagram.StreamKey{Instance: testSender, Group: datagram.GroupID{g}, Class: class}
}

func TestReceiversOpenOnOriginalData(t *testing.T) {
	tb := newTestTable(t, ReceiversConfig{Receiver: ReceiverConfig{CatchUp: -1}})
	key := groupKey(1, datagram.ReliableOrdered)
	var out Output
	// Trail 2: not a young stream from its start (see TestReceiverYoungHeartbeatOpens).
	tb.Handle(&datagram.Datagram{Kind: datagram.KindHeartbeat, Stream: key, Trail: 2, Highest: 9}, simBase, &out)
	tb.Handle(&datagram.Datagram{Kind: datagram.KindGone, Stream: key, Ranges: []datagram.Range{{First: 1, Last: 2}}}, simBase, &out)
	tb.Handle(nackFor(key, datagram.Range{First: 1, Last: 1}), simBase, &out)
	tb.Handle(dataFor(key, 7, datagram.FlagRepair), simBase, &out)
	tb.Handle(dataFor(key, 0, 0), simBase, &out)
	if tb.Len() != 0 || tb.Stats().UnknownStream != 5 || tb.HeldBytes() != 0 {
		t.Fatalf("opened on control or repair: %d streams, stats %+v", tb.Len(), tb.Stats())
	}
	ours := nackFor(key, datagram.Range{First: 1, Last: 1})
	ours.Target = testLocal // for the local Sender, not the table
	tb.Handle(ours, simBase, &out)
	tb.Handle(dataFor(key, 10, 0), simBase, &out)
	if tb.Len() != 1 || tb.Lookup(key) == nil || tb.Lookup(key).Start() != 10 || tb.Stats().Ignored != 1 {
		t.Fatalf("DATA did not open the stream at 10: %d streams", tb.Len())
	}
	if got := deliveredSeqs(t, &out); !equalSeqs(got, []uint64{10}) || tb.HeldBytes() != StreamOverhead {
		t.Errorf("delivered %v, %d bytes", got, tb.HeldBytes())
	}
}

func TestReceiversRouteNacksForSuppression(t *testing.T) {
	tb := newTestTable(t, ReceiversConfig{})
	key := groupKey(1, datagram.ReliableOrdered)
	var out Output
	tb.Handle(dataFor(key, 1, 0), simBase, &out)
	tb.Handle(dataFor(key, 3, 0), simBase, &out)
	if d := tb.NextDeadline().Sub(simBase); d > DefaultNackBackoff {
		t.Fatalf("table deadline in %v", d)
	}
	tb.Handle(nackFor(key, datagram.Range{First: 2, Last: 2}), simBase, &out)
	if tb.Stats().NacksSuppressed != 1 || tb.NextDeadline().Sub(simBase) < DefaultNackInterval {
		t.Errorf("heard NACK not routed: stats %+v", tb.Stats())
	}
	tb.Tick(tb.NextDeadline(), &out)
	if got := nackRanges(&out); len(got) != 1 || got[0][0].First != 2 {
		t.Errorf("NACKs %v", got)
	}
}

func TestReceiversEvictOldestIdle(t *testing.T) {
	tb := newTestTable(t, ReceiversConfig{MaxStreams: 3})
	var out Output
	now := simBase
	for g := byte(1); g <= 3; g++ {
		tb.Handle(dataFor(groupKey(g, datagram.ReliableUnordered), 1, 0), now, &out)
		now = now.Add(time.Second)
	}
	tb.Handle(dataFor(groupKey(2, datagram.ReliableUnordered), 5, 0), now, &out) // hole 2..4 on group 2
	tb.Handle(dataFor(groupKey(1, datagram.ReliableUnordered), 2, 0), now, &out) // group 1 active again
	// Group 4 needs room: group 3 is idle longest.
	tb.Handle(dataFor(groupKey(4, datagram.ReliableUnordered), 1, 0), now, &out)
	if tb.Len() != 3 || tb.Lookup(groupKey(3, datagram.ReliableUnordered)) != nil || tb.Stats().StreamsEvicted != 1 {
		t.Fatalf("evicted the wrong stream: %d streams, stats %+v", tb.Len(), tb.Stats())
	}
	// Next goes group 2, reporting its open hole.
	tb.Handle(dataFor(groupKey(5, datagram.ReliableUnordered), 1, 0), now, &out)
	if tb.Lookup(groupKey(2, datagram.ReliableUnordered)) != nil || len(out.Losses) != 1 ||
		out.Losses[0].Reason != ReasonStreamClosed || out.Losses[0].Range != (datagram.Range{First: 2, Last: 4}) {
		t.Errorf("losses %+v", out.Losses)
	}
}

func TestReceiversIdleExpiry(t *testing.T) {
	tb := newTestTable(t, ReceiversConfig{})
	var out Output
	a, b := groupKey(1, datagram.UnreliableOrdered), groupKey(2, datagram.ReliableOrdered)
	tb.Handle(dataFor(a, 1, 0), simBase, &out)
	tb.Handle(dataFor(b, 1, 0), simBase.Add(10*time.Second), &out)
	// Heartbeats do not keep a stream alive.
	tb.Handle(&datagram.Datagram{Kind: datagram.KindHeartbeat, Stream: a, Trail: 2, Highest: 1}, simBase.Add(20*time.Second), &out)
	if dl := tb.NextDeadline(); dl != simBase.Add(DefaultIdleTimeout) {
		t.Fatalf("deadline %v, want the idle expiry of the first stream", dl.Sub(simBase))
	}
	tb.Tick(simBase.Add(DefaultIdleTimeout), &out)
	if tb.Len() != 1 || tb.Lookup(a) != nil || tb.Stats().StreamsIdle != 1 {
		t.Fatalf("idle stream kept: %d streams", tb.Len())
	}
	tb.Tick(simBase.Add(40*time.Second), &out)
	if tb.Len() != 0 || tb.HeldBytes() != 0 || !tb.NextDeadline().IsZero() {
		t.Errorf("table not empty: %d streams, %d bytes", tb.Len(), tb.HeldBytes())
	}
	if st := tb.Stats(); st.Delivered != 2 || st.Heartbeats != 1 || st.StreamsIdle != 2 {
		t.Errorf("stats of freed streams lost: %+v", st)
	}
}

func TestReceiversForget(t *testing.T) {
	tb := newTestTable(t, ReceiversConfig{})
	var out Output
	other := datagram.InstanceID{0x77}
	for g := byte(2); g >= 1; g-- {
		key := groupKey(g, datagram.ReliableOrdered)
		for _, seq := range []uint64{1, 3} {
			tb.Handle(dataFor(key, seq, 0), simBase, &out)
		}
		key.Instance = other
		tb.Handle(dataFor(key, 1, 0), simBase, &out)
	}
	out.Reset()
	if n := tb.Forget(testSender, simBase, &out); n != 2 || tb.Len() != 2 {
		t.Fatalf("Forget freed %d, %d streams left", n, tb.Len())
	}
	// Both streams report hole 2 and release 3, in group order.
	if len(out.Losses) != 2 || out.Losses[0].Stream.Group[0] != 1 || out.Losses[1].Stream.Group[0] != 2 ||
		out.Losses[0].Reason != ReasonStreamClosed {
		t.Errorf("losses %+v", out.Losses)
	}
	if got := deliveredSeqs(t, &out); !equalSeqs(got, []uint64{3, 3}) || tb.Stats().StreamsForgotten != 2 {
		t.Errorf("delivered %v", got)
	}
	if tb.HeldBytes() != 2*StreamOverhead {
		t.Errorf("held %d bytes, want %d", tb.HeldBytes(), 2*StreamOverhead)
	}
}

func TestReceiversMemoryCap(t *testing.T) {
	const maxBytes = 64 << 10
	tb := newTestTable(t, ReceiversConfig{MaxStreams: 8, MaxBytes: maxBytes})
	var out Output
	big := make([]byte, 1000)
	// Four ordered streams each hold datagrams behind a hole at 2.
	for seq := uint64(1); seq <= 40; seq++ {
		for g := byte(1); g <= 4; g++ {
			if seq == 2 {
				continue
			}
			d := &datagram.Datagram{Kind: datagram.KindData, Stream: groupKey(g, datagram.ReliableOrdered),
				Seq: seq, Records: [][]byte{big}}
			tb.Handle(d, simBase, &out)
			if tb.HeldBytes() > maxBytes {
				t.Fatalf("table holds %d bytes > %d", tb.HeldBytes(), maxBytes)
			}
		}
	}
	st := tb.Stats()
	if st.MemorySheds == 0 || st.LossReports[ReasonMemoryLimit] != st.MemorySheds {
		t.Fatalf("cap not enforced by shedding: %+v", st)
	}
	for _, l := range out.Losses {
		if l.Reason != ReasonMemoryLimit || l.Range != (datagram.Range{First: 2, Last: 2}) {
			t.Errorf("loss %+v", l)
		}
	}
	if want := 4*39 - st.Delivered; uint64(tb.HeldBytes()) < want*1000 || st.Delivered == 0 {
		t.Errorf("delivered %d, held %d bytes", st.Delivered, tb.HeldBytes())
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	def := DefaultConfig()
	if def.Sender.RetainCount != DefaultRetainCount || def.Receivers.Receiver.NackTries != DefaultNackTries ||
		def.Receivers.MaxBytes != DefaultMaxBytes || def.Validate() != nil {
		t.Errorf("DefaultConfig %+v", def)
	}
	bad := []Config{
		{Sender: SenderConfig{RetainCount: -1}},
		{Sender: SenderConfig{HeartbeatMin: 2 * time.Second}},
		{Sender: SenderConfig{RepairRate: -5}},
		{Receivers: ReceiversConfig{Receiver: ReceiverConfig{NackInterval: -time.Second}}},
		{Receivers: ReceiversConfig{Receiver: ReceiverConfig{MaxGaps: -1}}},
		{Receivers: ReceiversConfig{MaxStreams: 10, MaxBytes: 100}},
	}
	for _, c := range bad {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: Validate = %v", c, err)
		}
	}
	if _, err := NewSender(testKey(datagram.ReliableOrdered), bad[0].Sender); !errors.Is(err, ErrConfig) {
		t.Errorf("NewSender accepted a bad config")
	}
	if _, err := NewReceivers(testLocal, bad[5].Receivers); !errors.Is(err, ErrConfig) {
		t.Errorf("NewReceivers accepted a bad config")
	}
	if Reason(3).String() != "retries-exhausted" || ReasonReorderOverflow.String() != "buffer-overflow" || Reason(200).String() != "unknown" {
		t.Errorf("reason names")
	}
}

// TestReceiversTimerHeap checks against a scan that the table's deadline is
// always its receivers' earliest, across many streams opening, NACKing,
// being repaired and closing.
func TestReceiversTimerHeap(t *testing.T) {
	tb := newTestTable(t, ReceiversConfig{MaxStreams: 16})
	rng := rand.New(rand.NewPCG(5, 6))
	var out Output
	now := simBase
	seqs := map[byte]uint64{}
	for i := 0; i < 5000; i++ {
		g := byte(rng.IntN(24))
		now = now.Add(time.Duration(rng.IntN(3000)) * time.Microsecond)
		switch key := groupKey(g, datagram.ReliableUnordered); rng.IntN(4) {
		case 0, 1:
			seqs[g] += 1 + uint64(rng.IntN(3))
			tb.Handle(dataFor(key, seqs[g], 0), now, &out)
		case 2:
			tb.Handle(dataFor(key, seqs[g]-uint64(rng.IntN(3)), datagram.FlagRepair), now, &out)
		case 3:
			if dl := tb.NextDeadline(); !dl.IsZero() && dl.Before(now) {
				tb.Tick(dl, &out)
			}
		}
		var want time.Time
		for st := tb.newest; st != nil; st = st.older {
			if dl := st.r.NextDeadline(); !dl.IsZero() && (want.IsZero() || dl.Before(want)) {
				want = dl
			}
			if idle := st.r.LastData().Add(DefaultIdleTimeout); want.IsZero() || idle.Before(want) {
				want = idle
			}
		}
		if got := tb.NextDeadline(); !got.Equal(want) {
			t.Fatalf("step %d: table deadline %v, receivers' earliest %v", i, got.Sub(simBase), want.Sub(simBase))
		}
		out.Reset()
	}
	if st := tb.Stats(); st.NacksSent == 0 || st.StreamsEvicted == 0 {
		t.Errorf("scenario too tame: %+v", st)
	}
}
