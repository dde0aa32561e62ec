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
