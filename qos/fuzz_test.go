package qos

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// FuzzReceiver turns its input into a sequence of operations on one
// Receiver (DATA with or without duplicate and repair flag, heartbeat, GONE,
// another receiver's NACK, time passing, wild numbers) and checks every
// output against a model: records intact, nothing delivered twice or that
// was never sent, ordered classes in order, every reliable number below the
// edge delivered or covered by exactly one LossReport, never both, and the
// memory bounds. It must never panic.
func FuzzReceiver(f *testing.F) {
	f.Add([]byte{3, 0, 0, 0, 0, 0, 5, 0, 0, 3, 0, 4, 200, 0, 4, 200})
	f.Add([]byte{2, 1, 0, 1, 0, 0, 9, 2, 1, 4, 2, 1, 2, 3, 0, 6, 4, 50, 4, 50, 4, 50})
	f.Add([]byte{3, 7, 0, 0, 0, 0, 4, 0, 0, 8, 0, 0, 12, 0, 1, 2, 30, 3, 5, 6, 4, 255, 0, 5, 3})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 7, 0, 0, 3, 0, 0, 3, 2, 0, 2, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 7, 2, 0, 3, 0, 5, 9, 0, 0, 1, 0})
	f.Add([]byte{3, 2, 5, 1, 0, 5, 1, 9, 5, 0, 0, 4, 255, 4, 255, 4, 255, 4, 255, 4, 255, 4, 255})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 2 || len(in) > 4096 {
			return
		}
		m := newFuzzModel(t, datagram.Class(in[0]%4), in[1])
		for ops := in[2:]; len(ops) > 0; {
			ops = m.step(ops)
			m.check()
		}
	})
}

// fuzzModel is the oracle of FuzzReceiver.
type fuzzModel struct {
	t         *testing.T
	r         *Receiver
	cfg       ReceiverConfig
	now       time.Time
	out       Output
	sent      map[uint64]bool
	delivered map[uint64]bool
	lastSeq   uint64
	losses    []datagram.Range
	top       uint64           // highest number sent so far
	gone      []datagram.Range // ranges of the GONEs fed
	trail     uint64           // highest heartbeat trail fed
}

func newFuzzModel(t *testing.T, class datagram.Class, bounds byte) *fuzzModel {
	cfg := ReceiverConfig{
		MaxGaps:          1 + int(bounds%8),
		ReorderDatagrams: 1 + int(bounds/8%16),
		NackTries:        1 + int(bounds/128)*3,
		GiveUpAfter:      []time.Duration{time.Nanosecond, 50 * time.Millisecond, time.Second}[int(bounds)%3],
		Rand:             rand.New(rand.NewPCG(uint64(bounds), 9)),
	}
	r, err := NewReceiver(testLocal, testKey(class), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &fuzzModel{t: t, r: r, cfg: r.cfg, now: simBase, sent: map[uint64]bool{}, delivered: map[uint64]bool{}}
}

// arg consumes one operand byte (0 when the input is exhausted).
func arg(ops *[]byte) byte {
	if len(*ops) == 0 {
		return 0
	}
	b := (*ops)[0]
	*ops = (*ops)[1:]
	return b
}

// step performs the operation at the head of ops and returns the rest.
func (m *fuzzModel) step(ops []byte) []byte {
	op := arg(&ops)
	key := m.r.Key()
	lo := max(1, m.top) - min(max(1, m.top)-1, 128) // numbers near the top
	switch op % 7 {
	case 0, 1: // DATA, flags in the operand
		a, b := arg(&ops), arg(&ops)
		m.data(lo+uint64(a), b)
	case 2: // heartbeat
		a, b := arg(&ops), arg(&ops)
		m.heartbeat(lo+uint64(a), lo+uint64(b))
	case 3: // GONE
		a, b := arg(&ops), arg(&ops)
		rg := datagram.Range{First: lo + uint64(a), Last: lo + uint64(a) + uint64(b%32)}
		m.gone = append(m.gone, rg)
		m.handle(&datagram.Datagram{Kind: datagram.KindGone, Stream: key, Ranges: []datagram.Range{rg}})
	case 4: // time passes, Tick at every deadline on the way
		m.advance(time.Duration(arg(&ops)) * 200 * time.Microsecond)
	case 5: // another receiver's NACK
		a, b := arg(&ops), arg(&ops)
		m.handle(nackFor(key, datagram.Range{First: lo + uint64(a), Last: lo + uint64(a) + uint64(b%16)}))
	case 6: // wild numbers far ahead
		a := arg(&ops)
		far := lo + 1<<20 + uint64(a)<<32
		if a%2 == 0 {
			m.data(far, 0)
		} else {
			m.heartbeat(lo, far)
		}
	}
	return ops
}

// heartbeat feeds HEARTBEAT(trail, highest), remembering a valid trail.
func (m *fuzzModel) heartbeat(trail, highest uint64) {
	if trail <= highest+1 {
		m.trail = max(m.trail, trail)
	}
	m.handle(&datagram.Datagram{Kind: datagram.KindHeartbeat, Stream: m.r.Key(), Trail: trail, Highest: highest})
}

// data feeds DATA seq (repair if flags&1, twice if flags&2) on a private
// buffer that is overwritten after the call.
func (m *fuzzModel) data(seq uint64, flags byte) {
	m.sent[seq] = true
	m.top = max(m.top, seq)
	var f datagram.Flags
	if flags&1 != 0 {
		f = datagram.FlagRepair
	}
	for range 1 + int(flags>>1&1) {
		d := dataFor(m.r.Key(), seq, f)
		m.handle(d)
		clear(d.Records[0])
	}
}

func (m *fuzzModel) handle(d *datagram.Datagram) {
	m.r.Handle(d, m.now, &m.out)
	m.consume()
}

func (m *fuzzModel) advance(dt time.Duration) {
	until := m.now.Add(dt)
	for dl := m.r.NextDeadline(); !dl.IsZero() && !dl.After(until); dl = m.r.NextDeadline() {
		if dl.After(m.now) {
			m.now = dl
		}
		m.r.Tick(m.now, &m.out)
		m.consume()
	}
	m.now = until
	m.r.Tick(m.now, &m.out)
	m.consume()
}

// consume checks each delivery and loss report as it comes out.
func (m *fuzzModel) consume() {
	t, class := m.t, m.r.Key().Class
	for _, d := range m.out.Deliveries {
		switch {
		case len(d.Records) != 1 || string(d.Records[0]) != string(seqRecord(d.Seq)):
			t.Fatalf("seq %d delivered with records %q", d.Seq, d.Records)
		case !m.sent[d.Seq] || m.delivered[d.Seq]:
			t.Fatalf("seq %d delivered twice or never sent", d.Seq)
		case class.Ordered() && d.Seq <= m.lastSeq:
			t.Fatalf("ordered delivery of %d after %d", d.Seq, m.lastSeq)
		case d.Seq < m.r.Start() || m.lostIn(d.Seq):
			t.Fatalf("seq %d delivered below the start or after its loss was reported", d.Seq)
		}
		m.delivered[d.Seq] = true
		m.lastSeq = d.Seq
	}
	for _, l := range m.out.Losses {
		rg := l.Range
		if !class.Reliable() || rg.First > rg.Last || rg.First < m.r.Start() || l.Reason == ReasonNone {
			t.Fatalf("bad loss report %+v", l)
		}
		if l.Reason == ReasonGone && !covers(m.gone, rg) || l.Reason == ReasonTrailPassed && rg.Last >= m.trail {
			t.Fatalf("loss %+v not backed by a GONE %v or the trail %d", l, m.gone, m.trail)
		}
		for _, p := range m.losses {
			if rg.First <= p.Last && p.First <= rg.Last {
				t.Fatalf("loss %v overlaps earlier loss %v", rg, p)
			}
		}
		for seq := range m.delivered {
			if seq >= rg.First && seq <= rg.Last {
				t.Fatalf("loss %v covers delivered %d", rg, seq)
			}
		}
		m.losses = append(m.losses, rg)
	}
	m.out.Reset()
}

func (m *fuzzModel) lostIn(seq uint64) bool {
	for _, p := range m.losses {
		if seq >= p.First && seq <= p.Last {
			return true
		}
	}
	return false
}

// check verifies the bounds and, on reliable classes, that [Start, Edge) is
// covered by deliveries and loss reports.
func (m *fuzzModel) check() {
	r, t := m.r, m.t
	if r.Held() > m.cfg.ReorderDatagrams || r.Gaps() > m.cfg.MaxGaps || r.HeldBytes() > m.cfg.MaxHeldBytes() {
		t.Fatalf("bounds exceeded: held %d gaps %d bytes %d", r.Held(), r.Gaps(), r.HeldBytes())
	}
	if !r.Key().Class.Reliable() || r.Edge() == 0 {
		return
	}
	resolved := slices.Clone(m.losses)
	for seq := range m.delivered {
		resolved = append(resolved, datagram.Range{First: seq, Last: seq})
	}
	if r.Edge() > r.Start() && !covers(resolved, datagram.Range{First: r.Start(), Last: r.Edge() - 1}) {
		t.Fatalf("a number in [%d, %d) is neither delivered nor reported lost", r.Start(), r.Edge())
	}
}

// covers reports whether the union of ranges contains rg.
func covers(ranges []datagram.Range, rg datagram.Range) bool {
	ranges = slices.Clone(ranges)
	slices.SortFunc(ranges, func(a, b datagram.Range) int { return cmp.Compare(a.First, b.First) })
	next := rg.First
	for _, c := range ranges {
		if c.First > next {
			break
		}
		if c.Last >= rg.Last {
			return true
		}
		next = max(next, c.Last+1)
	}
	return false
}
