package datagram

import (
	"errors"
	"testing"
)

func mustAppend(t testing.TB, d *Datagram) []byte {
	t.Helper()
	b, err := Append(nil, d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeRejects(t *testing.T) {
	data := mustAppend(t, &Datagram{Kind: KindData, Stream: testStream, Seq: 3,
		Records: [][]byte{[]byte("abc"), []byte("de")}})
	hb := mustAppend(t, &Datagram{Kind: KindHeartbeat, Stream: testStream, Trail: 2, Highest: 4})
	nack := mustAppend(t, &Datagram{Kind: KindNack, Stream: testStream, Target: testTarget,
		Ranges: []Range{{2, 3}, {6, 9}}})
	gone := mustAppend(t, &Datagram{Kind: KindGone, Stream: testStream, Ranges: []Range{{2, 3}}})
	ack := mustAppend(t, &Datagram{Kind: KindAck, Stream: testStream, Target: testTarget, Edge: 5})
	edit := func(b []byte, f func(c []byte) []byte) []byte {
		return f(append([]byte(nil), b...))
	}
	set := func(b []byte, off int, v ...byte) []byte {
		return edit(b, func(c []byte) []byte { copy(c[off:], v); return c })
	}
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrShort},
		{"ack short", ack[:len(ack)-1], ErrShort},
		{"ack trailing", append(append([]byte(nil), ack...), 0), ErrTrailing},
		{"ack edge 0", set(ack, len(ack)-8, 0, 0, 0, 0, 0, 0, 0, 0), ErrRange},
		{"header only 47", data[:47], ErrShort},
		{"too large", make([]byte, MaxDatagramSize+1), ErrTooLarge},
		{"version 0", set(data, 0, 0), ErrVersion},
		{"version 2", set(data, 0, 2), ErrVersion},
		{"kind 0", set(data, 1, 0), ErrKind},
		{"kind 9", set(data, 1, 9), ErrKind},
		{"flag bit 2", set(data, 2, 4), ErrFlags},
		{"repair on heartbeat", set(hb, 2, byte(FlagRepair)), ErrFlags},
		{"sealed", set(data, 2, byte(FlagSealed)), ErrSealed},
		{"class 4", set(data, 3, 4), ErrClass},
		{"key id unsealed", set(data, 4, 1), ErrReserved},
		{"reserved 5", set(data, 5, 1), ErrReserved},
		{"reserved 7", set(data, 7, 0x80), ErrReserved},
		{"data seq 0", set(data, 40, 0, 0, 0, 0, 0, 0, 0, 0), ErrSeq},
		{"heartbeat seq", set(hb, 47, 1), ErrSeq},
		{"data no count", data[:HeaderSize+1], ErrShort},
		{"data count 0", set(data, HeaderSize, 0, 0), ErrEmpty},
		{"data count too many", set(data, HeaderSize, 0xff, 0xff), ErrTooMany},
		{"data count beyond body", set(data, HeaderSize, 0, 3), ErrShort},
		{"data record beyond body", data[:len(data)-1], ErrShort},
		{"data record len 0", set(data, HeaderSize+2, 0, 0, 0, 0), ErrRecord},
		{"data record huge len", set(data, HeaderSize+2, 0xff, 0xff, 0xff, 0xff), ErrShort},
		{"data trailing", append(append([]byte(nil), data...), 0), ErrTrailing},
		{"heartbeat short", hb[:len(hb)-1], ErrShort},
		{"heartbeat trailing", append(append([]byte(nil), hb...), 0), ErrTrailing},
		{"heartbeat trail 0", set(hb, HeaderSize, 0, 0, 0, 0, 0, 0, 0, 0), ErrRange},
		{"heartbeat trail beyond", set(hb, HeaderSize+7, 9), ErrRange},
		{"nack short target", nack[:HeaderSize+10], ErrShort},
		{"nack no count", nack[:HeaderSize+16+1], ErrShort},
		{"nack count 0", set(nack, HeaderSize+16, 0, 0), ErrEmpty},
		{"nack count too many", set(nack, HeaderSize+16, 0, MaxNackRanges+1), ErrTooMany},
		{"nack ranges short", nack[:len(nack)-1], ErrShort},
		{"nack trailing", append(append([]byte(nil), nack...), 0), ErrTrailing},
		{"nack first > last", set(nack, HeaderSize+18+7, 4), ErrRange},
		{"nack overlap", set(nack, HeaderSize+18+16+7, 3), ErrRange},
		{"gone count 1 but 2 ranges", append(append([]byte(nil), gone...), make([]byte, 16)...), ErrTrailing},
		{"gone zero first", set(gone, HeaderSize+2+7, 0), ErrRange},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d Datagram
			if err := Decode(c.b, &d); !errors.Is(err, c.want) {
				t.Fatalf("Decode error %v, want %v", err, c.want)
			}
		})
	}
}

func TestDecodeAliasesInput(t *testing.T) {
	b := mustAppend(t, &Datagram{Kind: KindData, Stream: testStream, Seq: 1,
		Records: [][]byte{[]byte("abc"), []byte("xyz")}})
	var d Datagram
	if err := Decode(b, &d); err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] = 'Z'
	if string(d.Records[1]) != "xyZ" {
		t.Fatalf("record does not alias the input: %q", d.Records[1])
	}
	if cap(d.Records[0]) != 3 {
		t.Fatalf("record capacity %d lets an append overwrite the next record", cap(d.Records[0]))
	}
}

func TestDecodeResetsOtherKinds(t *testing.T) {
	var d Datagram
	if err := Decode(mustAppend(t, &Datagram{Kind: KindNack, Stream: testStream, Target: testTarget,
		Ranges: []Range{{1, 2}}}), &d); err != nil {
		t.Fatal(err)
	}
	if err := Decode(mustAppend(t, &Datagram{Kind: KindHeartbeat, Stream: testStream, Trail: 1}), &d); err != nil {
		t.Fatal(err)
	}
	if d.Target != (InstanceID{}) || len(d.Ranges) != 0 || len(d.Records) != 0 {
		t.Fatalf("fields of the previous kind survive: %+v", d)
	}
}

func TestDecodeDoesNotAllocate(t *testing.T) {
	recs := make([][]byte, 100)
	for i := range recs {
		recs[i] = []byte("a small record of some bytes")
	}
	data := mustAppend(t, &Datagram{Kind: KindData, Stream: testStream, Seq: 1, Records: recs})
	nack := mustAppend(t, &Datagram{Kind: KindNack, Stream: testStream, Ranges: ascendingRanges(MaxNackRanges)})
	// A header claiming MaxRecords records over a short body must fail
	// before allocating, even with no capacity to reuse.
	claim := append([]byte(nil), data[:HeaderSize+100]...)
	be.PutUint16(claim[HeaderSize:], MaxRecords)
	var d, fresh Datagram
	if err := Decode(data, &d); err != nil {
		t.Fatal(err)
	}
	if err := Decode(nack, &d); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if Decode(data, &d) != nil || Decode(nack, &d) != nil {
			t.Fatal("decode failed")
		}
		fresh = Datagram{}
		if !errors.Is(Decode(claim, &fresh), ErrShort) {
			t.Fatal("claim accepted")
		}
	})
	if allocs != 0 {
		t.Fatalf("Decode allocates %.1f times per run", allocs)
	}
}
