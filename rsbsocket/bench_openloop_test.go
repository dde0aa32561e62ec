package rsbsocket

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// BenchmarkRelayOpenLoop measures the relay from one publisher connection
// to one subscriber connection when the publisher sends b.N frames as fast
// as the socket accepts them, with no flow control of its own: it batches
// up to 128 frames or 64 KiB per write, as a client library buffers. The
// server must slow the publisher down to the subscriber's pace; "lost%" is
// the share of frames the subscriber never received.
func BenchmarkRelayOpenLoop(b *testing.B) {
	for _, size := range []int{64, 1 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("payload=%d", size), func(b *testing.B) {
			benchRelayOpenLoop(b, size)
		})
	}
}

func benchRelayOpenLoop(b *testing.B, size int) {
	s, addr := startServer(b, quietConfig(), nil)
	pub, sub := socktest.Dial(b, addr), socktest.Dial(b, addr)
	connOf(b, s, pub)
	connOf(b, s, sub)
	body := socktest.Notification(b, "/bench/open/", "bytes", bytes.Repeat([]byte{'p'}, size), 0)

	var received, last atomic.Int64
	subDone := make(chan struct{})
	_ = sub.SetReadDeadline(time.Now().Add(5 * socktest.Timeout))
	go func() {
		defer close(subDone)
		for {
			if _, err := sub.Recv(); err != nil {
				return
			}
			received.Add(1)
			last.Store(time.Now().UnixNano())
		}
	}()

	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	publishOpenLoop(b, pub, body, b.N)
	testutil.WaitFor(b, socktest.Timeout, "the server to read every frame", func() bool { return s.Stats().FramesIn == uint64(b.N) })
	testutil.WaitFor(b, socktest.Timeout, "the queues to drain", func() bool { frames, _ := s.QueueDepth(); return frames == 0 })
	delivered := int64(s.Stats().FramesOut)
	testutil.WaitFor(b, socktest.Timeout, "the subscriber", func() bool { return received.Load() == delivered })
	b.StopTimer()
	_ = sub.SetReadDeadline(time.Now())
	<-subDone
	elapsed := time.Duration(last.Load() - start.UnixNano())
	b.ReportMetric(float64(delivered)/elapsed.Seconds(), "frames/s")
	b.ReportMetric(100*float64(int64(b.N)-delivered)/float64(b.N), "lost%")
	b.ReportMetric(float64(s.Stats().Waits)/float64(b.N), "waits/frame")
}

// publishOpenLoop sends n copies of body as fast as the connection takes
// them, in batches of up to 128 frames or 64 KiB.
func publishOpenLoop(tb testing.TB, pub *sockclient.ClientConn, body []byte, n int) {
	tb.Helper()
	batch := make([][]byte, min(128, (64<<10+frame.HeaderSize+len(body)-1)/(frame.HeaderSize+len(body))))
	for i := range batch {
		batch[i] = body
	}
	for n > 0 {
		k := min(n, len(batch))
		if err := pub.SendMany(batch[:k]); err != nil {
			tb.Fatal(err)
		}
		n -= k
	}
}

// BenchmarkIdleConnMemory reports the server's live heap ("B/conn") and
// goroutine stacks ("stack-B/conn") per idle connection: a client that
// connected, announced one listener and then stays silent, after the
// server has written to it once (the other clients' Hellos). The heap
// figure includes the test clients' own socket objects (a few hundred
// bytes each).
func BenchmarkIdleConnMemory(b *testing.B) {
	const n = 1000
	var heap, stack float64
	for b.Loop() {
		heap, stack = idleConnMemory(b, n)
	}
	b.ReportMetric(heap, "B/conn")
	b.ReportMetric(stack, "stack-B/conn")
}

// idleConnMemory measures what n idle connections add to the heap and the
// stacks of a fresh server, which logs as the daemon does by default (text,
// level Info).
func idleConnMemory(b *testing.B, n int) (heap, stack float64) {
	s, err := NewServer(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, nil)
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	defer func() {
		_ = s.Close()
		<-served
	}()
	before := memStats()
	clients := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	for i := range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		clients = append(clients, c)
		if err := frame.ReadHandshake(c); err != nil {
			b.Fatal(err)
		}
		hello := socktest.Hello(b, uuid16(i), "listener", fmt.Sprintf("/idle/%d/", i))
		if _, err := c.Write(frame.AppendFrame(nil, hello)); err != nil {
			b.Fatal(err)
		}
	}
	testutil.WaitFor(b, socktest.Timeout, "every Hello", func() bool { return s.Stats().FramesIn == uint64(n) })
	testutil.WaitFor(b, socktest.Timeout, "the relayed Hellos to be written", func() bool { frames, _ := s.QueueDepth(); return frames == 0 })
	if got := len(s.Interest().Scopes); got != n+1 {
		b.Fatalf("interest has %d scopes, want %d", got, n+1)
	}
	after := memStats()
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n),
		float64(after.StackInuse-before.StackInuse) / float64(n)
}

// uuid16 returns a distinct 16-byte participant id for i.
func uuid16(i int) []byte {
	id := socktest.UUID(0x11)
	id[0], id[1] = byte(i>>8), byte(i)
	return id
}

// memStats returns the memory statistics after two garbage collections
// (the second frees the write buffers a burst left in their pool).
func memStats() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}
