package datagram

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

var (
	testInstance = InstanceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	testGroup    = GroupID{0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf}
	testTarget   = InstanceID{0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff}
	testStream   = StreamKey{Instance: testInstance, Group: testGroup, Class: ReliableOrdered}
)

// validDatagrams returns one datagram of each kind and some edge cases.
func validDatagrams() map[string]*Datagram {
	big := bytes.Repeat([]byte{0x5a}, DataCapacity(MaxDatagramSize))
	return map[string]*Datagram{
		"data": {Kind: KindData, Stream: testStream, Seq: 7,
			Records: [][]byte{[]byte("first"), []byte("second record")}},
		"data repair": {Kind: KindData, Flags: FlagRepair, Stream: testStream, Seq: 1,
			Records: [][]byte{{0}}},
		"data largest record": {Kind: KindData, Stream: testStream, Seq: 1 << 40, Records: [][]byte{big}},
		"heartbeat":           {Kind: KindHeartbeat, Stream: testStream, Trail: 3, Highest: 9},
		"heartbeat nothing retained": {Kind: KindHeartbeat,
			Stream: StreamKey{Group: testGroup, Class: UnreliableUnordered}, Trail: 1, Highest: 0},
		"heartbeat max": {Kind: KindHeartbeat, Stream: testStream, Trail: ^uint64(0), Highest: ^uint64(0)},
		"nack": {Kind: KindNack, Stream: testStream, Target: testTarget,
			Ranges: []Range{{1, 1}, {2, 5}, {9, 1 << 50}}},
		"gone": {Kind: KindGone, Stream: StreamKey{Instance: testInstance, Group: testGroup, Class: ReliableUnordered},
			Ranges: []Range{{4, 4}}},
		"ack": {Kind: KindAck, Stream: testStream, Target: testTarget, Edge: 77},
	}
}

func TestRoundTrip(t *testing.T) {
	for name, want := range validDatagrams() {
		t.Run(name, func(t *testing.T) {
			b, err := Append([]byte("prefix"), want)
			if err != nil {
				t.Fatalf("Append: %v", err)
			}
			if !strings.HasPrefix(string(b), "prefix") {
				t.Fatalf("Append did not keep dst")
			}
			b = b[len("prefix"):]
			var got Datagram
			if err := Decode(b, &got); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !equalDatagrams(&got, want) {
				t.Fatalf("decoded datagram differs from the encoded one")
			}
			again, err := Append(nil, &got)
			if err != nil || !bytes.Equal(again, b) {
				t.Fatalf("re-encoding differs (err %v)", err)
			}
		})
	}
}

// equalDatagrams compares field by field, treating nil and empty slices alike.
func equalDatagrams(a, b *Datagram) bool {
	if a.Kind != b.Kind || a.Flags != b.Flags || a.KeyID != b.KeyID || a.Stream != b.Stream ||
		a.Seq != b.Seq || a.Trail != b.Trail || a.Highest != b.Highest || a.Target != b.Target ||
		!slices.Equal(a.Ranges, b.Ranges) {
		return false
	}
	return slices.EqualFunc(a.Records, b.Records, bytes.Equal)
}

func TestHeaderLayout(t *testing.T) {
	d := &Datagram{Kind: KindData, Flags: FlagRepair, Stream: testStream, Seq: 0x0102030405060708,
		Records: [][]byte{[]byte("ab")}}
	b, err := Append(nil, d)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{1, 1, 2, 3, 0, 0, 0, 0}
	want = append(want, testInstance[:]...)
	want = append(want, testGroup[:]...)
	want = append(want, 1, 2, 3, 4, 5, 6, 7, 8)
	want = append(want, 0, 1, 0, 0, 0, 2, 'a', 'b')
	if !bytes.Equal(b, want) {
		t.Fatalf("encoding\n got %x\nwant %x", b, want)
	}
	if len(b) != HeaderSize+countSize+RecordOverhead+2 {
		t.Fatalf("size %d", len(b))
	}
}

func TestAppendRejects(t *testing.T) {
	data := func(mod func(d *Datagram)) *Datagram {
		d := &Datagram{Kind: KindData, Stream: testStream, Seq: 1, Records: [][]byte{{1}}}
		mod(d)
		return d
	}
	tooMany := make([][]byte, MaxRecords+1)
	for i := range tooMany {
		tooMany[i] = []byte{1}
	}
	half := make([]byte, MaxDatagramSize/2)
	cases := []struct {
		name string
		d    *Datagram
		want error
	}{
		{"kind 0", data(func(d *Datagram) { d.Kind = 0 }), ErrKind},
		{"kind 6", data(func(d *Datagram) { d.Kind = 6 }), ErrKind},
		{"class 4", data(func(d *Datagram) { d.Stream.Class = 4 }), ErrClass},
		{"unknown flag", data(func(d *Datagram) { d.Flags = 4 }), ErrFlags},
		{"sealed", data(func(d *Datagram) { d.Flags = FlagSealed }), ErrSealed},
		{"key id", data(func(d *Datagram) { d.KeyID = 1 }), ErrReserved},
		{"seq 0", data(func(d *Datagram) { d.Seq = 0 }), ErrSeq},
		{"no records", data(func(d *Datagram) { d.Records = nil }), ErrEmpty},
		{"empty record", data(func(d *Datagram) { d.Records = [][]byte{{}} }), ErrRecord},
		{"too many records", data(func(d *Datagram) { d.Records = tooMany }), ErrTooMany},
		{"too large", data(func(d *Datagram) { d.Records = [][]byte{half, half} }), ErrTooLarge},
		{"record too large", data(func(d *Datagram) { d.Records = [][]byte{make([]byte, MaxDatagramSize)} }), ErrRecord},
		{"heartbeat seq", &Datagram{Kind: KindHeartbeat, Seq: 1, Trail: 1}, ErrSeq},
		{"heartbeat repair", &Datagram{Kind: KindHeartbeat, Flags: FlagRepair, Trail: 1}, ErrFlags},
		{"heartbeat trail 0", &Datagram{Kind: KindHeartbeat}, ErrRange},
		{"heartbeat trail beyond", &Datagram{Kind: KindHeartbeat, Trail: 5, Highest: 3}, ErrRange},
		{"nack no ranges", &Datagram{Kind: KindNack}, ErrEmpty},
		{"nack first > last", &Datagram{Kind: KindNack, Ranges: []Range{{5, 4}}}, ErrRange},
		{"nack zero", &Datagram{Kind: KindNack, Ranges: []Range{{0, 4}}}, ErrRange},
		{"nack overlap", &Datagram{Kind: KindNack, Ranges: []Range{{1, 4}, {4, 6}}}, ErrRange},
		{"nack descending", &Datagram{Kind: KindNack, Ranges: []Range{{7, 8}, {1, 2}}}, ErrRange},
		{"gone too many", &Datagram{Kind: KindGone, Ranges: ascendingRanges(MaxNackRanges + 1)}, ErrTooMany},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := []byte("keep")
			out, err := Append(dst, c.d)
			if !errors.Is(err, c.want) {
				t.Fatalf("Append error %v, want %v", err, c.want)
			}
			if string(out) != "keep" {
				t.Fatalf("dst changed on error: %q", out)
			}
		})
	}
}

func ascendingRanges(n int) []Range {
	rs := make([]Range, n)
	for i := range rs {
		rs[i] = Range{First: uint64(3*i + 1), Last: uint64(3*i + 2)}
	}
	return rs
}

func TestAppendMaxRangesAndRecords(t *testing.T) {
	nack := &Datagram{Kind: KindNack, Stream: testStream, Ranges: ascendingRanges(MaxNackRanges)}
	b, err := Append(nil, nack)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > DefaultDatagramSize {
		t.Fatalf("a full NACK takes %d bytes, more than the default datagram size", len(b))
	}
	recs := make([][]byte, MaxRecords)
	for i := range recs {
		recs[i] = []byte{byte(i)}
	}
	data := &Datagram{Kind: KindData, Stream: testStream, Seq: 1, Records: recs}
	b, err = Append(nil, data)
	if err != nil {
		t.Fatal(err)
	}
	var got Datagram
	if err := Decode(b, &got); err != nil || len(got.Records) != MaxRecords {
		t.Fatalf("Decode: %v, %d records", err, len(got.Records))
	}
}

func TestDataCapacity(t *testing.T) {
	for _, c := range []struct{ in, want int }{
		{DefaultDatagramSize, DefaultDatagramSize - 54},
		{MaxDatagramSize, MaxDatagramSize - 54},
		{1 << 20, MaxDatagramSize - 54},
		{54, 0},
		{55, 1},
		{0, 0},
		{-5, 0},
	} {
		if got := DataCapacity(c.in); got != c.want {
			t.Errorf("DataCapacity(%d) = %d, want %d", c.in, got, c.want)
		}
	}
	d := &Datagram{Kind: KindData, Stream: testStream, Seq: 1,
		Records: [][]byte{make([]byte, DataCapacity(DefaultDatagramSize))}}
	b, err := Append(nil, d)
	if err != nil || len(b) != DefaultDatagramSize {
		t.Fatalf("a record of DataCapacity bytes makes %d bytes (err %v)", len(b), err)
	}
}
