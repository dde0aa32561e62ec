package datagram

import (
	"fmt"
	"testing"
)

var benchSizes = []int{64, 1024}

func BenchmarkAppend(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("record=%dB", n), func(b *testing.B) {
			d := &Datagram{Kind: KindData, Stream: testStream, Seq: 1, Records: [][]byte{make([]byte, n)}}
			buf := make([]byte, 0, DefaultDatagramSize)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = Append(buf[:0], d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("record=%dB", n), func(b *testing.B) {
			buf := mustAppend(b, &Datagram{Kind: KindData, Stream: testStream, Seq: 1,
				Records: [][]byte{make([]byte, n)}})
			var d Datagram
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				if err := Decode(buf, &d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPacker packs 64 B records into 1400 B datagrams: the cost per
// event of the small-event batching path.
func BenchmarkPacker(b *testing.B) {
	p, err := NewPacker(DefaultDatagramSize)
	if err != nil {
		b.Fatal(err)
	}
	rec := make([]byte, 64)
	out := make([]byte, 0, DefaultDatagramSize)
	hdr := &Datagram{Stream: testStream}
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		if p.Add(rec) != nil {
			hdr.Seq++
			if out, err = p.Flush(out[:0], hdr); err != nil {
				b.Fatal(err)
			}
			if err := p.Add(rec); err != nil {
				b.Fatal(err)
			}
		}
	}
}
