package fragmentation

import (
	"fmt"
	"testing"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// benchSizes are the event sizes and fragment sizes of the throughput
// benchmarks: RSB's default fragment size and one that fits a UDP datagram.
var (
	benchEvents    = []int{1 << 20, 16 << 20}
	benchFragments = []int{DefaultMaxFragmentSize, 1400}
)

func benchNames(fn func(b *testing.B, size, frag int)) func(b *testing.B) {
	return func(b *testing.B) {
		for _, size := range benchEvents {
			for _, frag := range benchFragments {
				b.Run(fmt.Sprintf("event=%dMiB/frag=%d", size>>20, frag), func(b *testing.B) { fn(b, size, frag) })
			}
		}
	}
}

// BenchmarkSplitReassemble splits an event into serialized fragments and
// reassembles it from them, reporting MB/s of event data.
func BenchmarkSplitReassemble(b *testing.B) {
	benchNames(func(b *testing.B, size, frag int) {
		n := richEvent(1, 1, payload(1, size))
		s, err := NewSplitter(SplitConfig{MaxFragmentSize: frag})
		if err != nil {
			b.Fatal(err)
		}
		a := mustAssembler(b, Config{MaxFragmentSize: frag})
		var frags [][]byte
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			if frags, err = s.AppendSplit(frags[:0], n); err != nil {
				b.Fatal(err)
			}
			var got *rsbpb.Notification
			for _, f := range frags {
				if got, err = a.AddBytes(t0, f); err != nil {
					b.Fatal(err)
				}
			}
			if got == nil || len(got.Data) != size {
				b.Fatal("event not reassembled")
			}
		}
	})(b)
}

// BenchmarkSplit measures AppendSplit alone.
func BenchmarkSplit(b *testing.B) {
	benchNames(func(b *testing.B, size, frag int) {
		n := richEvent(1, 1, payload(1, size))
		s, err := NewSplitter(SplitConfig{MaxFragmentSize: frag})
		if err != nil {
			b.Fatal(err)
		}
		var frags [][]byte
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			if frags, err = s.AppendSplit(frags[:0], n); err != nil {
				b.Fatal(err)
			}
		}
	})(b)
}

// BenchmarkReassemble measures AddBytes alone over pre-split fragments.
func BenchmarkReassemble(b *testing.B) {
	benchNames(func(b *testing.B, size, frag int) {
		frags := mustAppendSplit(b, richEvent(1, 1, payload(1, size)), frag)
		a := mustAssembler(b, Config{MaxFragmentSize: frag})
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			var got *rsbpb.Notification
			var err error
			for _, f := range frags {
				if got, err = a.AddBytes(t0, f); err != nil {
					b.Fatal(err)
				}
			}
			if got == nil {
				b.Fatal("event not reassembled")
			}
		}
	})(b)
}

// BenchmarkPassThrough measures small single-fragment events: split, then
// AddBytes (the network path), reporting events/s. "rich" events carry every
// header field (three event ids, meta data with user infos and times), which
// dominates protobuf decoding; "minimal" ones only event id and scope.
func BenchmarkPassThrough(b *testing.B) {
	for _, c := range []struct {
		name string
		make func(s byte, seq uint32, data []byte) *rsbpb.Notification
		size int
	}{
		{"minimal/data=64", minimalEvent, 64},
		{"rich/data=0", richEvent, 0},
		{"rich/data=64", richEvent, 64},
		{"rich/data=1024", richEvent, 1024},
	} {
		b.Run(c.name, func(b *testing.B) {
			n := c.make(1, 1, payload(1, c.size))
			s, err := NewSplitter(SplitConfig{MaxFragmentSize: 1400})
			if err != nil {
				b.Fatal(err)
			}
			a := mustAssembler(b, Config{})
			var frags [][]byte
			b.ReportAllocs()
			for b.Loop() {
				if frags, err = s.AppendSplit(frags[:0], n); err != nil {
					b.Fatal(err)
				}
				if got, err := a.AddBytes(t0, frags[0]); err != nil || got == nil {
					b.Fatal("not delivered", err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
