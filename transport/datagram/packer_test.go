package datagram

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestPackerBatchesSmallRecords(t *testing.T) {
	p, err := NewPacker(DefaultDatagramSize)
	if err != nil {
		t.Fatal(err)
	}
	rec := bytes.Repeat([]byte{'r'}, 60)
	var out [][]byte
	var seq uint64
	flush := func() {
		seq++
		b, err := p.Flush(nil, &Datagram{Stream: testStream, Seq: seq})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	const events = 100
	for range events {
		err := p.Add(rec)
		if errors.Is(err, ErrFull) {
			flush()
			err = p.Add(rec)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	flush()
	perDatagram := (DefaultDatagramSize - HeaderSize - countSize) / (RecordOverhead + len(rec))
	if want := (events + perDatagram - 1) / perDatagram; len(out) != want {
		t.Fatalf("%d datagrams, want %d", len(out), want)
	}
	total := 0
	for i, b := range out {
		if len(b) > DefaultDatagramSize {
			t.Fatalf("datagram %d has %d bytes", i, len(b))
		}
		var d Datagram
		if err := Decode(b, &d); err != nil {
			t.Fatal(err)
		}
		if d.Kind != KindData || d.Seq != uint64(i+1) || d.Stream != testStream {
			t.Fatalf("datagram %d header %+v", i, d)
		}
		for _, r := range d.Records {
			if !bytes.Equal(r, rec) {
				t.Fatalf("record %q", r)
			}
		}
		total += len(d.Records)
	}
	if total != events {
		t.Fatalf("%d records, want %d", total, events)
	}
}

func TestPackerLimits(t *testing.T) {
	for _, limit := range []int{0, 54, MaxDatagramSize + 1} {
		if _, err := NewPacker(limit); err == nil {
			t.Errorf("NewPacker(%d) accepted", limit)
		}
	}
	p, err := NewPacker(55)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Add([]byte{1, 2}); !errors.Is(err, ErrRecord) {
		t.Fatalf("oversize record: %v", err)
	}
	if err := p.Add(nil); !errors.Is(err, ErrRecord) {
		t.Fatalf("empty record: %v", err)
	}
	if err := p.Add([]byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := p.Add([]byte{1}); !errors.Is(err, ErrFull) {
		t.Fatalf("second record: %v", err)
	}
	if p.Size() != 55 || p.Len() != 1 || p.Fits(1) {
		t.Fatalf("size %d len %d", p.Size(), p.Len())
	}
	if _, err := p.Flush(nil, &Datagram{Kind: KindNack, Stream: testStream, Seq: 1}); !errors.Is(err, ErrKind) {
		t.Fatalf("flush as NACK: %v", err)
	}
	if _, err := p.Flush(nil, &Datagram{Stream: testStream}); !errors.Is(err, ErrSeq) {
		t.Fatalf("flush with seq 0: %v", err)
	}
	if p.Len() != 1 {
		t.Fatal("failed flush dropped records")
	}
	b, err := p.Flush(nil, &Datagram{Flags: FlagRepair, Stream: testStream, Seq: 9})
	if err != nil || len(b) != 55 {
		t.Fatalf("flush: %v, %d bytes", err, len(b))
	}
	if _, err := p.Flush(nil, &Datagram{Stream: testStream, Seq: 10}); !errors.Is(err, ErrEmpty) {
		t.Fatalf("empty flush: %v", err)
	}
}

func TestPackerMaxRecords(t *testing.T) {
	p, err := NewPacker(MaxDatagramSize)
	if err != nil {
		t.Fatal(err)
	}
	for i := range MaxRecords {
		if err := p.Add([]byte{byte(i)}); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if err := p.Add([]byte{1}); !errors.Is(err, ErrFull) {
		t.Fatalf("record beyond MaxRecords: %v", err)
	}
	b, err := p.Flush(nil, &Datagram{Stream: testStream, Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	var d Datagram
	if err := Decode(b, &d); err != nil || len(d.Records) != MaxRecords {
		t.Fatalf("decode: %v, %d records", err, len(d.Records))
	}
}

// Example of the intended use: pack, flush when full.
func ExamplePacker() {
	p, _ := NewPacker(100)
	var seq uint64
	for _, ev := range []string{"event one", "event two", "event three", "event four"} {
		if err := p.Add([]byte(ev)); errors.Is(err, ErrFull) {
			seq++
			b, _ := p.Flush(nil, &Datagram{Seq: seq})
			fmt.Println(len(b), "bytes")
			_ = p.Add([]byte(ev))
		}
	}
	seq++
	b, _ := p.Flush(nil, &Datagram{Seq: seq})
	fmt.Println(len(b), "bytes")
	// Output:
	// 91 bytes
	// 64 bytes
}
