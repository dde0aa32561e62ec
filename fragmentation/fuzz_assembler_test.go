package fragmentation

import (
	"bytes"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// The operation-sequence fuzzer drives an Assembler with fragments of a few
// known events (valid, repeated, corrupted), clock steps and prunes, and
// checks every step against a model of the Assembler's rules.

const fuzzEvents = 5

// Corruptions applied by opCorrupt.
const (
	corruptCount  = iota // num_data_parts + 1
	corruptIndex         // data_part = num_data_parts
	corruptHeader        // fragment 0 without scope
	corruptCut           // last byte cut off
	numCorruptions
)

// Operations, chosen by the low four bits of the first byte of each two-byte
// step (the high four bits select the corruption of opCorrupt).
const (
	opAdd = iota
	opAddNext
	opCorrupt
	opAdvance
	opPrune
	opBurst
	numOps
)

// modelEvent is what the model knows about one event.
type modelEvent struct {
	orig      []byte   // serialized original Notification
	frags     [][]byte // its serialized fragments
	open      bool     // the Assembler holds a partial event for it
	total     uint32   // num_data_parts of that partial event
	got       map[uint32]bool
	created   time.Time
	delivered bool
	dropped   bool // the Assembler dropped it: it refuses its fragments from then on
}

type assemblerModel struct {
	t      *testing.T
	a      *Assembler
	cfg    Config
	now    time.Time
	events [fuzzEvents]*modelEvent
}

func newAssemblerModel(t *testing.T, setup []byte) *assemblerModel {
	cfg := Config{
		MaxPartialEvents: 1 + int(setup[0]%4),
		MaxEventSize:     []int{2500, 4000}[setup[0]>>2&1],
		MaxBufferedBytes: []int{4000, 6000, 9000, 1 << 20}[setup[0]>>3&3],
		Timeout:          time.Second,
	}
	if setup[0]&0x20 != 0 {
		// Buffers full of stale bytes: every byte of an event must be
		// written by the Assembler.
		cfg.Alloc = func(c int) []byte { return bytes.Repeat([]byte{0xee}, c)[:0] }
	}
	if setup[0]&0x40 != 0 {
		cfg.Room = Room{Head: 5, Tail: 3} // events reassembled with room around their data
	}
	fragSize := []int{120, 260, 600}[int(setup[1])%3]
	m := &assemblerModel{t: t, a: mustAssembler(t, cfg), cfg: cfg, now: t0}
	for k := range fuzzEvents {
		data := payload(byte(k), int(setup[2+k])*12)
		n := minimalEvent(byte(k%2), uint32(k), data)
		if fragSize > 200 && k%2 == 1 {
			n = richEvent(byte(k%2), uint32(k), data)
		}
		m.events[k] = &modelEvent{orig: mustMarshal(t, n), frags: mustAppendSplit(t, n, fragSize)}
	}
	return m
}

// eventOf finds the model event a Drop names.
func (m *assemblerModel) eventOf(d Drop) (int, *modelEvent) {
	for k, e := range m.events {
		if d.SenderID == [16]byte(sender(byte(k%2))) && d.SequenceNumber == uint32(k) {
			return k, e
		}
	}
	m.t.Fatalf("drop for an unknown event: %+v", d)
	return 0, nil
}

func (m *assemblerModel) expired(e *modelEvent) bool {
	return !m.now.Before(e.created.Add(m.cfg.Timeout))
}

// close checks a Drop against the model's partial event and forgets it.
func (m *assemblerModel) close(d Drop, e *modelEvent) {
	if !e.open || d.Total != e.total || d.Received != uint32(len(e.got)) {
		m.t.Fatalf("drop %+v does not match the model (open %v, total %d, got %d)", d, e.open, e.total, len(e.got))
	}
	e.open, e.got, e.dropped = false, nil, true
}

// step runs one operation.
func (m *assemblerModel) step(op, arg byte) {
	k := int(arg) % fuzzEvents
	e := m.events[k]
	switch int(op&0x0f) % numOps {
	case opAdd:
		m.add(k, int(arg)/fuzzEvents%len(e.frags), -1)
	case opAddNext:
		i := 0
		for e.open && e.got[uint32(i)] {
			i++
		}
		m.add(k, i%len(e.frags), -1)
	case opCorrupt:
		m.add(k, int(arg)/fuzzEvents%len(e.frags), int(op>>4)%numCorruptions)
	case opAdvance:
		m.now = m.now.Add(time.Duration(arg%16) * 100 * time.Millisecond)
	case opPrune:
		m.prune(m.now)
	case opBurst:
		for i := range e.frags {
			m.add(k, i, -1)
		}
	}
	checkBounds(m.t, m.a)
	open := 0
	for _, e := range m.events {
		if e.open {
			open++
		}
	}
	if open != m.a.Len() {
		m.t.Fatalf("Assembler holds %d partial events, model %d", m.a.Len(), open)
	}
}

// prune runs Prune and checks that exactly the expired events were dropped.
func (m *assemblerModel) prune(now time.Time) {
	m.a.Prune(now)
	want := map[int]bool{}
	for k, e := range m.events {
		if e.open && m.expired(e) {
			want[k] = true
		}
	}
	for _, d := range m.a.AppendDrops(nil) {
		k, e := m.eventOf(d)
		if d.Reason != ReasonTimeout || !want[k] {
			m.t.Fatalf("prune dropped %+v", d)
		}
		delete(want, k)
		m.close(d, e)
	}
	if len(want) > 0 {
		m.t.Fatalf("prune kept expired events %v", want)
	}
}

// corrupt returns fragment i of e changed by corruption c, with the counters
// and whether fragment 0 keeps its header.
func (m *assemblerModel) corrupt(e *modelEvent, i, c int) (b []byte, total, index uint32, header bool) {
	b, total, index, header = e.frags[i], uint32(len(e.frags)), uint32(i), true
	switch c {
	case corruptCount:
		total++
		b = reencode(m.t, b, func(f *rsbpb.FragmentedNotification) { f.NumDataParts = proto.Uint32(total) })
	case corruptIndex:
		index = total
		b = reencode(m.t, b, func(f *rsbpb.FragmentedNotification) { f.DataPart = proto.Uint32(index) })
	case corruptHeader:
		index, header = 0, false
		b = reencode(m.t, e.frags[0], func(f *rsbpb.FragmentedNotification) { f.Notification.Scope = nil })
	case corruptCut:
		b = b[:len(b)-1]
	}
	return b, total, index, header
}
