package qos

import (
	"errors"
	"testing"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

var (
	testSender = datagram.InstanceID{0x51}
	testLocal  = datagram.InstanceID{0xAA}
	testPeer   = datagram.InstanceID{0xBB}
	testGroup  = datagram.GroupID{0x6e}
)

func testKey(c datagram.Class) datagram.StreamKey {
	return datagram.StreamKey{Instance: testSender, Group: testGroup, Class: c}
}

// newTestSender returns a sender of a reliable ordered stream.
func newTestSender(t *testing.T, cfg SenderConfig) *Sender {
	t.Helper()
	s, err := NewSender(testKey(datagram.ReliableOrdered), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sendN publishes n one-record datagrams at now.
func sendN(t *testing.T, s *Sender, n int, now time.Time, out *Output) {
	t.Helper()
	for range n {
		if _, err := s.Send(&datagram.Datagram{Records: [][]byte{make([]byte, 100)}}, now, out); err != nil {
			t.Fatal(err)
		}
	}
}

// nackFor builds a NACK from testPeer asking s's stream for ranges.
func nackFor(key datagram.StreamKey, ranges ...datagram.Range) *datagram.Datagram {
	return &datagram.Datagram{Kind: datagram.KindNack, Target: key.Instance, Ranges: ranges,
		Stream: datagram.StreamKey{Instance: testPeer, Group: key.Group, Class: key.Class}}
}

// kinds sums up out.Datagrams: repairs by seq, GONE ranges, heartbeats.
func kinds(out *Output) (repairs []uint64, gone []datagram.Range, heartbeats []*datagram.Datagram) {
	for _, d := range out.Datagrams {
		switch d.Kind {
		case datagram.KindData:
			if d.Flags&datagram.FlagRepair != 0 {
				repairs = append(repairs, d.Seq)
			}
		case datagram.KindGone:
			gone = append(gone, d.Ranges...)
		case datagram.KindHeartbeat:
			heartbeats = append(heartbeats, d)
		}
	}
	return repairs, gone, heartbeats
}

func TestSenderNumbers(t *testing.T) {
	for _, class := range allClasses {
		s, err := NewSender(testKey(class), SenderConfig{})
		if err != nil {
			t.Fatal(err)
		}
		var out Output
		for want := uint64(1); want <= 3; want++ {
			d := &datagram.Datagram{Flags: datagram.FlagRepair, Records: [][]byte{{1}}}
			seq, err := s.Send(d, simBase, &out)
			if err != nil || seq != want || d.Seq != want || d.Kind != datagram.KindData ||
				d.Stream != testKey(class) || d.Flags != 0 || out.Datagrams[len(out.Datagrams)-1] != d {
				t.Fatalf("%s: Send = %d, %v; datagram %+v", className(class), seq, err, d)
			}
		}
		if _, err := s.Send(&datagram.Datagram{}, simBase, &out); !errors.Is(err, ErrNoRecords) {
			t.Errorf("Send without records: %v", err)
		}
		if got, want := s.Retained(), map[bool]int{true: 3, false: 0}[class.Reliable()]; got != want {
			t.Errorf("%s retains %d, want %d", className(class), got, want)
		}
		if !class.Reliable() && !s.NextDeadline().IsZero() {
			t.Errorf("unreliable sender schedules %v", s.NextDeadline())
		}
	}
}

func TestSenderHeartbeatSchedule(t *testing.T) {
	s := newTestSender(t, SenderConfig{})
	var out Output
	if !s.NextDeadline().IsZero() {
		t.Fatal("deadline before any data")
	}
	sendN(t, s, 2, simBase, &out)
	out.Reset()
	// 10 ms after the data, then doubling to 1 s, then every second.
	want := []time.Duration{10, 30, 70, 150, 310, 630, 1270, 2270, 3270}
	for _, w := range want {
		dl := s.NextDeadline()
		if got := dl.Sub(simBase); got != w*time.Millisecond {
			t.Fatalf("heartbeat at %v, want %v", got, w*time.Millisecond)
		}
		s.Tick(dl.Add(-time.Microsecond), &out) // early: nothing
		s.Tick(dl, &out)
	}
	_, _, hbs := kinds(&out)
	if len(hbs) != len(want) || len(out.Datagrams) != len(want) {
		t.Fatalf("%d heartbeats among %d datagrams, want %d", len(hbs), len(out.Datagrams), len(want))
	}
	if hb := hbs[0]; hb.Trail != 1 || hb.Highest != 2 || hb.Stream != s.Key() {
		t.Errorf("heartbeat %+v, want trail 1 highest 2", hb)
	}
}

func TestSenderAmbientHeartbeat(t *testing.T) {
	s := newTestSender(t, SenderConfig{})
	var out Output
	// Continuous data every 5 ms for 3 s: heartbeats only every second.
	now := simBase
	for now.Before(simBase.Add(3 * time.Second)) {
		sendN(t, s, 1, now, &out)
		now = now.Add(5 * time.Millisecond)
		if dl := s.NextDeadline(); !dl.After(now) {
			s.Tick(dl, &out)
		}
	}
	_, _, hbs := kinds(&out)
	if len(hbs) != 3 {
		t.Fatalf("%d heartbeats in 3 s of continuous data, want 3", len(hbs))
	}
	// The ambient clock starts with the first data: at 1 s, 2 s and 3 s.
	if st := s.Stats(); st.Heartbeats != 3 || s.lastHB != simBase.Add(3*time.Second) {
		t.Errorf("last heartbeat at %v", s.lastHB.Sub(simBase))
	}
}

func TestSenderRetentionBounds(t *testing.T) {
	var out Output
	s := newTestSender(t, SenderConfig{RetainCount: 10})
	sendN(t, s, 25, simBase, &out)
	if s.Retained() != 10 || s.Trail() != 16 || s.Stats().EvictedCount != 15 {
		t.Errorf("count bound: retained %d trail %d stats %+v", s.Retained(), s.Trail(), s.Stats())
	}
	size := retainedSize(&datagram.Datagram{Records: [][]byte{make([]byte, 100)}})
	s = newTestSender(t, SenderConfig{RetainBytes: 4 * size})
	sendN(t, s, 9, simBase, &out)
	if s.Retained() != 4 || s.Trail() != 6 || s.Stats().EvictedBytes != 5 {
		t.Errorf("byte bound: retained %d trail %d", s.Retained(), s.Trail())
	}
	s = newTestSender(t, SenderConfig{RetainAge: time.Second})
	sendN(t, s, 3, simBase, &out)
	sendN(t, s, 2, simBase.Add(600*time.Millisecond), &out)
	s.Tick(simBase.Add(time.Second), &out)
	if s.Retained() != 2 || s.Trail() != 4 || s.Stats().EvictedAge != 3 {
		t.Errorf("age bound: retained %d trail %d", s.Retained(), s.Trail())
	}
	s.Tick(simBase.Add(2*time.Second), &out)
	if s.Retained() != 0 || s.Trail() != s.Highest()+1 {
		t.Errorf("all aged: retained %d trail %d highest %d", s.Retained(), s.Trail(), s.Highest())
	}
}

// TestSenderAckedRelease: what every receiver acknowledged is evicted beyond
// the newest RetainAcked of it, never what a receiver still lacks; an edge
// past the highest sent counts as the highest; a NACK for an evicted number
// is answered GONE, one for a kept number repaired; unreliable senders
// retain nothing to release.
func TestSenderAckedRelease(t *testing.T) {
	var out Output
	s := newTestSender(t, SenderConfig{RetainAcked: 4})
	sendN(t, s, 10, simBase, &out) // retains 1..10
	s.Acked(3, &out)               // 1, 2 acknowledged: within the 4 kept
	if s.Retained() != 10 || s.Stats().EvictedAcked != 0 {
		t.Fatalf("edge 3: retained %d, evicted %d", s.Retained(), s.Stats().EvictedAcked)
	}
	s.Acked(8, &out) // 1..7 acknowledged: 4..7 kept
	if s.Retained() != 7 || s.Trail() != 4 || s.Stats().EvictedAcked != 3 {
		t.Fatalf("edge 8: retained %d trail %d evicted %d", s.Retained(), s.Trail(), s.Stats().EvictedAcked)
	}
	s.Acked(1<<40, &out) // clamped to 11: 1..10 acknowledged, 7..10 kept
	if s.Retained() != 4 || s.Trail() != 7 {
		t.Fatalf("edge past the highest: retained %d trail %d", s.Retained(), s.Trail())
	}
	out.Reset()
	s.HandleNack(nackFor(s.Key(), datagram.Range{First: 5, Last: 8}), simBase.Add(time.Millisecond), &out)
	repairs, gone, _ := kinds(&out)
	if !equalSeqs(repairs, []uint64{7, 8}) || len(gone) != 1 || gone[0] != (datagram.Range{First: 5, Last: 6}) {
		t.Errorf("NACK 5..8 after release: repairs %v, GONE %v", repairs, gone)
	}
	u, err := NewSender(testKey(datagram.UnreliableUnordered), SenderConfig{RetainAcked: 1})
	if err != nil {
		t.Fatal(err)
	}
	sendN(t, u, 5, simBase, &out)
	u.Acked(6, &out)
	if u.Retained() != 0 || u.Stats().EvictedAcked != 0 {
		t.Errorf("unreliable: retained %d, evicted %d", u.Retained(), u.Stats().EvictedAcked)
	}
	if err := (SenderConfig{RetainAcked: -1}).Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("negative RetainAcked: %v", err)
	}
}

// TestSenderReleased: every datagram a sender lets go reaches
// Output.Released exactly once, whichever bound evicts it; an unreliable
// sender releases each datagram as it numbers it, after it in Datagrams.
func TestSenderReleased(t *testing.T) {
	var out Output
	s := newTestSender(t, SenderConfig{RetainCount: 4, RetainAcked: 1, RetainAge: time.Second})
	sendN(t, s, 6, simBase, &out) // count bound: 1, 2 released
	if got := releasedSeqs(&out); !equalSeqs(got, []uint64{1, 2}) {
		t.Fatalf("count bound released %v", got)
	}
	out.Reset()
	s.Acked(6, &out) // 3..5 acknowledged beyond the newest 1: 3, 4 released
	if got := releasedSeqs(&out); !equalSeqs(got, []uint64{3, 4}) {
		t.Fatalf("acked released %v", got)
	}
	out.Reset()
	s.Tick(simBase.Add(2*time.Second), &out) // age: 5, 6
	if got := releasedSeqs(&out); !equalSeqs(got, []uint64{5, 6}) {
		t.Fatalf("aged released %v", got)
	}
	out.Reset()
	sendN(t, s, 3, simBase.Add(3*time.Second), &out)
	out.Reset()
	s.ReleaseAll(&out)
	if got := releasedSeqs(&out); !equalSeqs(got, []uint64{7, 8, 9}) || s.Retained() != 0 || s.Stats().EvictedClosed != 3 {
		t.Fatalf("release all: %v, retained %d, stats %+v", got, s.Retained(), s.Stats())
	}
	u, err := NewSender(testKey(datagram.UnreliableUnordered), SenderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	sendN(t, u, 2, simBase, &out)
	if got := releasedSeqs(&out); !equalSeqs(got, []uint64{1, 2}) || len(out.Datagrams) != 2 {
		t.Fatalf("unreliable: released %v, datagrams %d", got, len(out.Datagrams))
	}
	out.Reset()
	if len(out.Released) != 0 {
		t.Fatal("Reset kept Released")
	}
}

// releasedSeqs lists the sequence numbers of out.Released.
func releasedSeqs(out *Output) []uint64 {
	var seqs []uint64
	for _, d := range out.Released {
		seqs = append(seqs, d.Seq)
	}
	return seqs
}

func TestSenderNackRepairAndGone(t *testing.T) {
	var out Output
	s := newTestSender(t, SenderConfig{RetainCount: 10})
	sendN(t, s, 20, simBase, &out) // retains 11..20
	out.Reset()
	now := simBase.Add(time.Millisecond)
	s.HandleNack(nackFor(s.Key(), datagram.Range{First: 5, Last: 12}, datagram.Range{First: 19, Last: 30}), now, &out)
	repairs, gone, _ := kinds(&out)
	if want := []uint64{11, 12, 19, 20}; !equalSeqs(repairs, want) {
		t.Errorf("repairs %v, want %v", repairs, want)
	}
	if len(gone) != 1 || gone[0] != (datagram.Range{First: 5, Last: 10}) {
		t.Errorf("GONE %v, want [5,10]", gone)
	}
	for _, d := range out.Datagrams {
		if d.Kind == datagram.KindData && (len(d.Records) != 1 || d.Stream != s.Key()) {
			t.Errorf("repair %+v lacks the original's records", d)
		}
	}
	if st := s.Stats(); st.NackSeqsAbove != 10 || st.GoneSent != 1 || st.RepairsSent != 4 {
		t.Errorf("stats %+v", st)
	}
	// Within RepairMerge the same request is merged; after it, repeated.
	out.Reset()
	s.HandleNack(nackFor(s.Key(), datagram.Range{First: 11, Last: 11}), now.Add(4*time.Millisecond), &out)
	if repairs, _, _ := kinds(&out); len(repairs) != 0 || s.Stats().RepairsMerged != 1 {
		t.Errorf("repeat within 5 ms: repairs %v merged %d", repairs, s.Stats().RepairsMerged)
	}
	s.HandleNack(nackFor(s.Key(), datagram.Range{First: 11, Last: 11}), now.Add(5*time.Millisecond), &out)
	if repairs, _, _ := kinds(&out); !equalSeqs(repairs, []uint64{11}) {
		t.Errorf("repeat after 5 ms: repairs %v", repairs)
	}
	// Not for this stream: ignored.
	other := nackFor(s.Key(), datagram.Range{First: 12, Last: 12})
	other.Target = testPeer
	out.Reset()
	s.HandleNack(other, now.Add(time.Second), &out)
	if len(out.Datagrams) != 0 || s.Stats().NacksIgnored != 1 {
		t.Errorf("foreign NACK answered: %d datagrams", len(out.Datagrams))
	}
}

func TestSenderRepairRateLimit(t *testing.T) {
	var out Output
	s := newTestSender(t, SenderConfig{RepairBurst: 8, RepairRate: 1000, MaxPendingRepairs: 20})
	sendN(t, s, 100, simBase, &out)
	out.Reset()
	// Ask for 60: 20 fit in the queue (the lowest numbers), the rest is
	// dropped; 8 go out at once.
	s.HandleNack(nackFor(s.Key(), datagram.Range{First: 1, Last: 30}, datagram.Range{First: 50, Last: 79}), simBase, &out)
	repairs, _, _ := kinds(&out)
	if want := []uint64{1, 2, 3, 4, 5, 6, 7, 8}; !equalSeqs(repairs, want) {
		t.Fatalf("first burst %v, want %v", repairs, want)
	}
	if st := s.Stats(); st.RepairsDropped != 40 {
		t.Errorf("dropped %d, want 40", st.RepairsDropped)
	}
	// The other 12 go out at 1,000/s in batches as the owner follows
	// NextDeadline (the heartbeat is due meanwhile too).
	now := simBase
	for i := 0; i < 100 && s.Stats().RepairsSent < 20; i++ {
		now = s.NextDeadline()
		s.Tick(now, &out)
	}
	if st := s.Stats(); st.RepairsSent != 20 {
		t.Fatalf("sent %d repairs, want 20", st.RepairsSent)
	}
	if took := now.Sub(simBase); took < 11*time.Millisecond || took > 13*time.Millisecond {
		t.Errorf("12 queued repairs at 1000/s took %v, want 12ms", took)
	}
	repairs, _, _ = kinds(&out)
	for i := 1; i < len(repairs); i++ {
		if repairs[i] <= repairs[i-1] {
			t.Fatalf("repairs out of order: %v", repairs)
		}
	}
}

func TestSenderUnreliableIgnoresNacks(t *testing.T) {
	s, _ := NewSender(testKey(datagram.UnreliableOrdered), SenderConfig{})
	var out Output
	sendN(t, s, 5, simBase, &out)
	out.Reset()
	s.HandleNack(nackFor(s.Key(), datagram.Range{First: 1, Last: 5}), simBase, &out)
	s.Tick(simBase.Add(time.Second), &out)
	if len(out.Datagrams) != 0 || s.Stats().NacksIgnored != 1 {
		t.Errorf("unreliable sender answered: %d datagrams", len(out.Datagrams))
	}
}

func equalSeqs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSenderNackStorm hammers a sender with 1,000 NACKs/s for a second, for
// long-evicted and retained numbers alike: repairs stay under the token
// bucket and evicted ranges get GONE.
func TestSenderNackStorm(t *testing.T) {
	var out Output
	s := newTestSender(t, SenderConfig{RetainCount: 500})
	sendN(t, s, 1000, simBase, &out) // retains 501..1000
	out.Reset()
	for i := range 1000 {
		now := simBase.Add(time.Duration(i) * time.Millisecond)
		s.HandleNack(nackFor(s.Key(), datagram.Range{First: 1, Last: 600}), now, &out)
		if dl := s.NextDeadline(); !dl.After(now) {
			s.Tick(now, &out)
		}
	}
	st := s.Stats()
	if maxRepairs := uint64(DefaultRepairBurst + DefaultRepairRate); st.RepairsSent > maxRepairs {
		t.Errorf("%d repairs in 1 s, cap %d", st.RepairsSent, maxRepairs)
	}
	if st.GoneSent < 900 || st.NacksReceived != 1000 {
		t.Errorf("GONE sent %d for %d NACKs", st.GoneSent, st.NacksReceived)
	}
	_, gone, _ := kinds(&out)
	for _, g := range gone {
		if g != (datagram.Range{First: 1, Last: 500}) {
			t.Fatalf("GONE %v, want [1,500]", g)
		}
	}
	// The 100 retained numbers were repeated once per RepairMerge at most.
	if st.RepairsSent < 100 || st.RepairsMerged == 0 {
		t.Errorf("repairs %d merged %d", st.RepairsSent, st.RepairsMerged)
	}
}
