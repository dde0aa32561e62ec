package datagram

import (
	"bytes"
	"errors"
	"testing"
)

// TestAppendGather checks that the segments of every valid datagram, made
// one after another in one growing arena, concatenate to what Append
// writes, also after later calls grew the arena, and that the records are
// referenced rather than copied.
func TestAppendGather(t *testing.T) {
	var arena []byte
	var segs [][]byte
	var want [][]byte
	var ends []int
	for name, d := range validDatagrams() {
		b, err := Append(nil, d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		start := len(segs)
		arena, segs, err = AppendGather(arena, segs, d)
		if err != nil {
			t.Fatalf("%s: AppendGather: %v", name, err)
		}
		if n := len(segs) - start; n != GatherSegments(d) {
			t.Fatalf("%s: %d segments, GatherSegments says %d", name, n, GatherSegments(d))
		}
		if d.Kind == KindData {
			for i, r := range d.Records {
				if s := segs[start+2*i+1]; &s[0] != &r[0] || len(s) != len(r) {
					t.Fatalf("%s: record %d is not referenced as segment %d", name, i, 2*i+1)
				}
			}
		}
		want = append(want, b)
		ends = append(ends, len(segs))
	}
	start := 0
	for i, end := range ends {
		if got := bytes.Join(segs[start:end], nil); !bytes.Equal(got, want[i]) {
			t.Fatalf("datagram %d: segments join to %x, want %x", i, got, want[i])
		}
		start = end
	}
}

// TestAppendGatherRejects checks that AppendGather refuses what Append
// refuses and leaves its inputs unchanged.
func TestAppendGatherRejects(t *testing.T) {
	bad := []*Datagram{
		{Kind: KindData, Stream: testStream, Records: [][]byte{{1}}},
		{Kind: KindData, Stream: testStream, Seq: 1},
		{Kind: KindData, Stream: testStream, Seq: 1, Flags: FlagSealed, Records: [][]byte{{1}}},
		{Kind: KindHeartbeat, Trail: 5, Highest: 3},
		{Kind: KindNack},
	}
	for i, d := range bad {
		_, werr := Append(nil, d)
		dst := []byte("keep")
		segs := [][]byte{dst}
		out, outSegs, err := AppendGather(dst, segs, d)
		if err == nil || !errors.Is(err, errors.Unwrap(werr)) {
			t.Fatalf("datagram %d: error %v, Append says %v", i, err, werr)
		}
		if string(out) != "keep" || len(outSegs) != 1 {
			t.Fatalf("datagram %d: inputs changed on error: %q, %d segments", i, out, len(outSegs))
		}
	}
}

// TestPieces checks that a DATA datagram given in pieces encodes, copied
// and gathered, to the bytes of the same datagram with each record's
// pieces joined; that gathering references the pieces; and that it decodes
// to the joined records.
func TestPieces(t *testing.T) {
	data := bytes.Repeat([]byte{0xab}, 3000)
	pieces := [][][]byte{
		{[]byte("head0"), data[:1000], []byte("tail0")},
		{[]byte("head1"), data[1000:], nil, []byte("t")},
		{[]byte("whole")},
	}
	d := &Datagram{Kind: KindData, Stream: testStream, Seq: 7, Pieces: pieces}
	joined := &Datagram{Kind: KindData, Stream: testStream, Seq: 7}
	for _, ps := range pieces {
		joined.Records = append(joined.Records, bytes.Join(ps, nil))
	}
	want, err := Append(nil, joined)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Append(nil, d)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Append: %v, %x\nwant %x", err, got, want)
	}
	if d.RecordCount() != 3 || d.RecordBytes() != joined.RecordBytes() || d.RecordLen(1) != len(joined.Records[1]) {
		t.Fatalf("count %d bytes %d len(1) %d", d.RecordCount(), d.RecordBytes(), d.RecordLen(1))
	}
	_, segs, err := AppendGather([]byte("old"), nil, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) > GatherSegments(d) {
		t.Fatalf("%d segments, GatherSegments says at most %d", len(segs), GatherSegments(d))
	}
	if g := bytes.Join(segs, nil); !bytes.Equal(g, want) {
		t.Fatalf("gathered %x\nwant %x", g, want)
	}
	referenced := false
	for _, s := range segs {
		if len(s) > 0 && &s[0] == &data[1000] {
			referenced = true
		}
	}
	if !referenced {
		t.Fatal("the data piece was copied, not referenced")
	}
	var dec Datagram
	if err := Decode(got, &dec); err != nil {
		t.Fatal(err)
	}
	for i, r := range dec.Records {
		if !bytes.Equal(r, joined.Records[i]) {
			t.Fatalf("record %d decodes to %x", i, r)
		}
	}
}

// TestPiecesRejects: records and pieces together, a record whose pieces
// are all empty, and pieces past the datagram size are refused.
func TestPiecesRejects(t *testing.T) {
	big := make([]byte, MaxDatagramSize)
	for name, c := range map[string]struct {
		d    *Datagram
		want error
	}{
		"both":  {&Datagram{Kind: KindData, Stream: testStream, Seq: 1, Records: [][]byte{{1}}, Pieces: [][][]byte{{{1}}}}, ErrRecord},
		"empty": {&Datagram{Kind: KindData, Stream: testStream, Seq: 1, Pieces: [][][]byte{{nil, {}}}}, ErrRecord},
		"large": {&Datagram{Kind: KindData, Stream: testStream, Seq: 1, Pieces: [][][]byte{{big[:100]}, {big[:MaxDatagramSize/2], big[:MaxDatagramSize/2]}}}, ErrRecord},
		"sum":   {&Datagram{Kind: KindData, Stream: testStream, Seq: 1, Pieces: [][][]byte{{big[:MaxDatagramSize/2]}, {big[:MaxDatagramSize/2]}}}, ErrTooLarge},
	} {
		if _, err := Append(nil, c.d); !errors.Is(err, c.want) {
			t.Errorf("%s: Append: %v, want %v", name, err, c.want)
		}
		if _, _, err := AppendGather(nil, nil, c.d); !errors.Is(err, c.want) {
			t.Errorf("%s: AppendGather: %v, want %v", name, err, c.want)
		}
	}
}
