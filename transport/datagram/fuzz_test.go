package datagram

import (
	"bytes"
	"errors"
	"testing"
)

var sentinels = []error{ErrShort, ErrVersion, ErrKind, ErrClass, ErrFlags, ErrReserved, ErrSeq,
	ErrTrailing, ErrEmpty, ErrTooMany, ErrRecord, ErrRange, ErrTooLarge, ErrSealed}

// FuzzDecode checks that Decode never panics, fails only with a sentinel,
// and accepts exactly what Append produces: a decoded datagram re-encodes to
// the input bytes. Decoding reuses one Datagram so stale state would show.
func FuzzDecode(f *testing.F) {
	for _, d := range validDatagrams() {
		b, err := Append(nil, d)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 4096 {
			// Large seeds make the mutator crawl; the small ones cover the same code.
			continue
		}
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	f.Add([]byte{})
	f.Add(make([]byte, HeaderSize))
	f.Add([]byte{1, 1, 0, 0, 0, 0, 0, 0})
	var reused Datagram
	f.Fuzz(func(t *testing.T, b []byte) {
		err := Decode(b, &reused)
		if err != nil {
			if !isSentinel(err) {
				t.Fatalf("Decode returned a non-sentinel error %v", err)
			}
			return
		}
		checkInvariants(t, &reused)
		out, err := Append(nil, &reused)
		if err != nil {
			t.Fatalf("Append of a decoded datagram: %v", err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("re-encoding differs\n in %x\nout %x", b, out)
		}
		_, segs, err := AppendGather(nil, nil, &reused)
		if err != nil || !bytes.Equal(bytes.Join(segs, nil), b) {
			t.Fatalf("gathered re-encoding differs (%v)", err)
		}
	})
}

func isSentinel(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

func checkInvariants(t *testing.T, d *Datagram) {
	t.Helper()
	switch d.Kind {
	case KindData:
		if len(d.Records) < 1 || len(d.Records) > MaxRecords || d.Seq == 0 {
			t.Fatalf("DATA with %d records, seq %d", len(d.Records), d.Seq)
		}
	case KindNack, KindGone:
		if len(d.Ranges) < 1 || len(d.Ranges) > MaxNackRanges {
			t.Fatalf("%v with %d ranges", d.Kind, len(d.Ranges))
		}
		for i, r := range d.Ranges {
			if r.First == 0 || r.First > r.Last || (i > 0 && r.First <= d.Ranges[i-1].Last) {
				t.Fatalf("bad range %d: %+v", i, d.Ranges)
			}
		}
	case KindHeartbeat:
		if d.Trail == 0 {
			t.Fatal("heartbeat trail 0")
		}
	case KindAck:
		if d.Edge == 0 {
			t.Fatal("ACK edge 0")
		}
	default:
		t.Fatalf("unknown kind %d decoded", d.Kind)
	}
}

// FuzzPacker runs an operation sequence against a Packer and a simple model:
// each op byte either flushes (high bit set) or adds a record of length
// op&0x7f times a size multiplier. The model predicts every ErrFull and
// ErrRecord, and each flushed datagram must decode to the model's records.
func FuzzPacker(f *testing.F) {
	f.Add(uint16(1400), uint8(1), []byte{10, 20, 30, 0x80, 5, 0, 127, 127, 0x80})
	f.Add(uint16(55), uint8(1), []byte{1, 1, 2, 0x80, 1})
	f.Add(uint16(65000), uint8(200), []byte{127, 127, 127, 127, 127, 0x80, 127})
	f.Add(uint16(100), uint8(0), []byte{0, 0x81})
	f.Fuzz(func(t *testing.T, limit16 uint16, mult uint8, ops []byte) {
		limit := int(limit16)
		p, err := NewPacker(limit)
		valid := DataCapacity(limit) >= 1 && limit <= MaxDatagramSize
		if err != nil || !valid {
			if valid || !errors.Is(err, ErrTooLarge) {
				t.Fatalf("NewPacker(%d): %v", limit, err)
			}
			return
		}
		var model [][]byte
		size := HeaderSize + countSize
		var seq uint64
		for i, op := range ops {
			if op&0x80 != 0 {
				seq++
				checkFlush(t, p, model, seq)
				model, size = nil, HeaderSize+countSize
				continue
			}
			rec := bytes.Repeat([]byte{byte(i)}, int(op)*int(mult))
			err := p.Add(rec)
			switch {
			case len(rec) == 0 || len(rec) > DataCapacity(limit):
				if !errors.Is(err, ErrRecord) {
					t.Fatalf("Add(%d bytes) = %v, want ErrRecord", len(rec), err)
				}
			case len(model) == MaxRecords || size+RecordOverhead+len(rec) > limit:
				if !errors.Is(err, ErrFull) {
					t.Fatalf("Add(%d bytes) at size %d = %v, want ErrFull", len(rec), size, err)
				}
			case err != nil:
				t.Fatalf("Add(%d bytes) at size %d: %v", len(rec), size, err)
			default:
				model = append(model, rec)
				size += RecordOverhead + len(rec)
			}
			if p.Size() != size || p.Len() != len(model) {
				t.Fatalf("packer size %d len %d, model %d %d", p.Size(), p.Len(), size, len(model))
			}
		}
	})
}

func checkFlush(t *testing.T, p *Packer, model [][]byte, seq uint64) {
	t.Helper()
	b, err := p.Flush(nil, &Datagram{Stream: testStream, Seq: seq})
	if len(model) == 0 {
		if !errors.Is(err, ErrEmpty) {
			t.Fatalf("empty flush: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > p.Limit() {
		t.Fatalf("datagram of %d bytes exceeds limit %d", len(b), p.Limit())
	}
	var d Datagram
	if err := Decode(b, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Records) != len(model) || d.Seq != seq {
		t.Fatalf("%d records seq %d, want %d seq %d", len(d.Records), d.Seq, len(model), seq)
	}
	for i := range model {
		if !bytes.Equal(d.Records[i], model[i]) {
			t.Fatalf("record %d differs", i)
		}
	}
}
