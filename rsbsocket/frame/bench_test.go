package frame_test

import (
	"bufio"
	"bytes"
	"fmt"
	"testing"

	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
)

// BenchmarkReadFrame measures reading large frame bodies: a payload of a
// power of two plus the Notification around it, the common large frame;
// "grown" is ReadFrame into new memory (and a server reader past its
// eager budget), "server" a server reader within it.
func BenchmarkReadFrame(b *testing.B) {
	for _, size := range []int{64 << 10, 1<<20 + 128, 4<<20 + 128, 8<<20 + 128, 16<<20 + 128} {
		for _, mode := range []string{"grown", "server"} {
			b.Run(fmt.Sprintf("body=%d/%s", size, mode), func(b *testing.B) {
				stream := frame.AppendFrame(nil, make([]byte, size))
				src := bytes.NewReader(stream)
				r := bufio.NewReaderSize(src, frame.BufSize)
				var eager frame.LargeBudget
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					src.Reset(stream)
					r.Reset(src)
					var err error
					if mode == "server" {
						_, _, err = frame.ReadFrameRoom(r, 0, frame.Room{}, &eager)
					} else {
						_, err = frame.ReadFrame(r, 0, nil)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkParseFrame measures the routing parse of the rsb-python frame.
func BenchmarkParseFrame(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(socktest.PythonFrame)))
	for b.Loop() {
		if _, err := frame.ParseFrame(socktest.PythonFrame); err != nil {
			b.Fatal(err)
		}
	}
}
