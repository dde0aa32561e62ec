package fragmentation

import (
	"bytes"
	"testing"
	"time"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// add offers fragment i of event k, corrupted by c (-1: intact), and checks
// the outcome against the model.
func (m *assemblerModel) add(k, i, c int) {
	e := m.events[k]
	if e.delivered {
		return // each event is offered until delivered, never after
	}
	b, total, index, header := e.frags[i], uint32(len(e.frags)), uint32(i), true
	if c >= 0 {
		b, total, index, header = m.corrupt(e, i, c)
	}
	wasDropped := e.dropped
	got, err := m.a.AddBytes(m.now, b)
	m.checkRoom(got, m.a.TakeRoom(), total)
	own, expired := m.takeDrops(k, e, c != corruptCut)
	if c == corruptCut {
		if ReasonOf(err) != ReasonDecode || got != nil || len(own) > 0 {
			m.t.Fatalf("cut fragment: %v", err)
		}
		return
	}
	m.checkLastID(k)
	if wasDropped || expired {
		if ReasonOf(err) != ReasonAfterDrop || got != nil || len(own) > 0 {
			m.t.Fatalf("fragment %d of dropped event %d: %v, drops %+v", index, k, err, own)
		}
		return
	}
	want := m.expect(e, total, index, header)
	switch {
	case want != 0:
		m.wantDrop(own, e, err, want)
	case total == 1:
		m.wantDelivery(e, got, err, own)
	case e.open && e.got[index]:
		if ReasonOf(err) != ReasonDuplicate || got != nil || len(own) > 0 {
			m.t.Fatalf("duplicate: %v", err)
		}
	default:
		m.accepted(e, got, err, own, total, index)
	}
}

// checkLastID checks that the Assembler names event k as the last offered.
func (m *assemblerModel) checkLastID(k int) {
	s, q, ok := m.a.LastEventID()
	if !ok || s != [16]byte(sender(byte(k%2))) || q != uint32(k) {
		m.t.Fatalf("LastEventID = %x, %d, %v; want event %d", s, q, ok, k)
	}
}

// takeDrops collects the drops of one add: drops of other events must be
// evictions of open partial events (or timeouts of expired ones); a timeout
// of event k itself must come first, closes it and makes expired true. The
// remaining drops of k are returned. A decoded fragment (decoded true) must
// expire its own partial event when that is due.
func (m *assemblerModel) takeDrops(k int, e *modelEvent, decoded bool) (own []Drop, expired bool) {
	for _, d := range m.a.AppendDrops(nil) {
		dk, de := m.eventOf(d)
		switch {
		case dk == k && len(own) == 0 && d.Reason == ReasonTimeout && e.open && m.expired(e):
			m.close(d, e)
			expired = true
		case dk == k:
			own = append(own, d)
		case d.Reason == ReasonTimeout && !m.expired(de),
			d.Reason != ReasonTimeout && d.Reason != ReasonEvictedPartials && d.Reason != ReasonEvictedBytes:
			m.t.Fatalf("unexpected drop of event %d: %+v", dk, d)
		default:
			m.close(d, de)
		}
	}
	if decoded && e.open && m.expired(e) {
		m.t.Fatalf("expired partial event %d was extended", k)
	}
	return own, expired
}

// expect returns the Reason the Assembler must refuse a fragment with, from
// the rules checked before any data is stored.
func (m *assemblerModel) expect(e *modelEvent, total, index uint32, header bool) Reason {
	switch {
	case e.open && e.total != total:
		return ReasonInconsistentCount
	case index >= total:
		return ReasonIndexOutOfRange
	case index == 0 && !header:
		return ReasonHeaderMissing
	}
	return 0
}

// wantDrop checks a refusal that drops event e (or only the fragment).
func (m *assemblerModel) wantDrop(own []Drop, e *modelEvent, err error, r Reason) {
	if ReasonOf(err) != r || len(own) != 1 || own[0].Reason != r {
		m.t.Fatalf("want refusal %v, got %v, drops %+v", r, err, own)
	}
	if e.open {
		m.close(own[0], e)
	}
	e.dropped = true
}

// wantDelivery checks that a single-fragment event was delivered intact.
// checkRoom checks what TakeRoom gave after an add: with Config.Room, an
// event completed from several fragments lies in its room; nothing else
// has any.
func (m *assemblerModel) checkRoom(got *rsbpb.Notification, room []byte, total uint32) {
	rm := m.cfg.Room
	if got == nil || total < 2 || rm == (Room{}) {
		if room != nil {
			m.t.Fatalf("room of %d bytes without an event reassembled into it", len(room))
		}
		return
	}
	if len(room) < rm.Head+len(got.Data)+rm.Tail || (len(got.Data) > 0 && &room[rm.Head] != &got.Data[0]) {
		m.t.Fatalf("room of %d bytes does not hold %d data bytes at %d", len(room), len(got.Data), rm.Head)
	}
}

func (m *assemblerModel) wantDelivery(e *modelEvent, got *rsbpb.Notification, err error, own []Drop) {
	if err != nil || len(own) > 0 || got == nil {
		m.t.Fatalf("single fragment not delivered: %v, drops %+v", err, own)
	}
	m.delivered(e, got)
}

func (m *assemblerModel) delivered(e *modelEvent, got *rsbpb.Notification) {
	if !bytes.Equal(mustMarshal(m.t, got), e.orig) {
		m.t.Fatalf("delivered event differs from the original")
	}
	e.delivered, e.open, e.got = true, false, nil
}

// accepted checks a fragment that passed the checks: it is stored (and may
// complete its event), or its event is dropped for size or byte budget.
func (m *assemblerModel) accepted(e *modelEvent, got *rsbpb.Notification, err error, own []Drop, total, index uint32) {
	if len(own) > 0 {
		d := own[0]
		ok := len(own) == 1 && got == nil && ReasonOf(err) == d.Reason &&
			(d.Reason == ReasonEventTooLarge || d.Reason == ReasonEvictedBytes)
		if !ok {
			m.t.Fatalf("fragment %d/%d: got %v, drops %+v", index, total, err, own)
		}
		if e.open {
			m.close(d, e)
		} else if d.Received != 0 || d.Total != total {
			m.t.Fatalf("drop of a new partial event: %+v", d)
		}
		e.dropped = true
		return
	}
	if err != nil {
		m.t.Fatalf("fragment %d/%d refused: %v", index, total, err)
	}
	if !e.open {
		e.open, e.total, e.got, e.created = true, total, map[uint32]bool{}, m.now
	}
	e.got[index] = true
	if complete := len(e.got) == int(total); complete != (got != nil) {
		m.t.Fatalf("fragment %d/%d: %d of %d received, delivered %v", index, total, len(e.got), total, got != nil)
	}
	if got != nil {
		m.delivered(e, got)
	}
}

// assemblerSeeds are the seed inputs of FuzzAssembler: setup bytes (config,
// fragment size, event sizes) followed by two-byte operations.
func assemblerSeeds() [][]byte {
	setup := []byte{0x0b, 1, 40, 3, 250, 120, 0}
	var burst, mixed, corrupt, interleave, dups []byte
	for k := range fuzzEvents {
		burst = append(burst, opBurst, byte(k))
	}
	for r := range 60 {
		mixed = append(mixed, byte(r*7%numOps), byte(r*13))
	}
	for r := range 40 {
		corrupt = append(corrupt, byte(opCorrupt|r%numCorruptions<<4), byte(r*11), opAddNext, byte(r), opAdvance, 3)
	}
	for r := range 12 * fuzzEvents {
		interleave = append(interleave, opAddNext, byte(r))
	}
	for k := range fuzzEvents {
		for _, i := range []int{2, 2, 1, 1, 0, 0, 3, 3} {
			dups = append(dups, opAdd, byte(fuzzEvents*i+k))
		}
	}
	var seeds [][]byte
	for _, ops := range [][]byte{burst, mixed, corrupt, interleave, dups} {
		for _, s0 := range []byte{0x00, 0x03, 0x0b, 0x1c, 0x1f, 0x2b, 0x3f, 0x4b, 0x6f} { // 0x20: Alloc, 0x40: Room
			for _, s1 := range []byte{0, 1, 2} {
				in := append([]byte{s0, s1}, setup[2:]...)
				seeds = append(seeds, append(in, ops...))
			}
		}
	}
	return append(seeds, append([]byte{0x03, 2, 200, 200, 200, 200, 200}, burst...))
}

// runAssemblerModel runs one FuzzAssembler input and returns the model.
func runAssemblerModel(t *testing.T, data []byte) *assemblerModel {
	if len(data) < 2+fuzzEvents {
		return nil
	}
	m := newAssemblerModel(t, data[:2+fuzzEvents])
	ops := data[2+fuzzEvents:]
	for steps := 0; len(ops) >= 2 && steps < 500; steps++ {
		m.step(ops[0], ops[1])
		ops = ops[2:]
	}
	stats := m.a.Stats()
	m.now = m.now.Add(time.Hour)
	m.prune(m.now)
	delivered := 0
	for k, e := range m.events {
		if e.open {
			t.Fatalf("event %d neither delivered nor dropped", k)
		}
		if e.delivered {
			delivered++
		}
	}
	if m.a.Len() != 0 || m.a.BufferedBytes() != 0 || stats.Delivered != uint64(delivered) {
		t.Fatalf("end state: %d partials, %d bytes, stats %+v", m.a.Len(), m.a.BufferedBytes(), stats)
	}
	return m
}

// FuzzAssembler drives an Assembler with operations decoded from the input
// (add fragment i of event k, add the next missing one, add a corrupted one,
// advance the clock, prune, add a whole event) and checks it against a model:
// no panic, bounds held, each event delivered at most once and intact, and
// each event delivered or reported dropped once it can no longer complete.
func FuzzAssembler(f *testing.F) {
	for _, s := range assemblerSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) { runAssemblerModel(t, data) })
}

// TestAssemblerModelSeeds checks that the fuzz seeds exercise the model:
// deliveries, duplicates and drops for most reasons.
func TestAssemblerModelSeeds(t *testing.T) {
	var total Stats
	for _, s := range assemblerSeeds() {
		st := runAssemblerModel(t, s).a.Stats()
		total.Delivered += st.Delivered
		for r, v := range st.Dropped {
			total.Dropped[r] += v
		}
	}
	if total.Delivered < 20 {
		t.Fatalf("seeds deliver only %d events", total.Delivered)
	}
	for _, r := range []Reason{ReasonDuplicate, ReasonInconsistentCount, ReasonIndexOutOfRange, ReasonHeaderMissing,
		ReasonTimeout, ReasonEvictedPartials, ReasonEvictedBytes, ReasonEventTooLarge, ReasonDecode, ReasonAfterDrop} {
		if total.Dropped[r] == 0 {
			t.Errorf("seeds never drop for %v", r)
		}
	}
	t.Logf("seeds: %d delivered, drops %v", total.Delivered, total.Dropped)
}
