package rsbsocket

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/rttstat"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
)

// BenchmarkRelay measures frames through the server relay from one
// publisher connection to one subscriber connection over loopback TCP. The
// publisher keeps a window of frames in flight below the queue bounds so
// nothing is dropped. "send" writes one frame per system call, as RSB
// clients do; "batch" hands 64 frames to SendMany at a time.
func BenchmarkRelay(b *testing.B) {
	for _, size := range []int{64, 1 << 10, 64 << 10} {
		for _, mode := range []string{"send", "batch"} {
			b.Run(fmt.Sprintf("payload=%d/%s", size, mode), func(b *testing.B) {
				benchRelay(b, size, mode == "batch")
			})
		}
	}
}

func benchRelay(b *testing.B, size int, batch bool) { benchRelayTo(b, size, batch, 1) }

// benchRelayTo publishes b.N frames of a size-byte payload from one
// connection to subs subscriber connections (each interested in
// everything), one frame per write or in batches of 64, keeping a window of
// frames in flight to every subscriber below the queue bounds so nothing is
// dropped. frames/s counts published frames.
func benchRelayTo(b *testing.B, size int, batch bool, subs int) {
	s, addr := startServer(b, quietConfig(), nil)
	pub := socktest.Dial(b, addr)
	connOf(b, s, pub)
	body := socktest.Notification(b, "/bench/relay/", "bytes", bytes.Repeat([]byte{'p'}, size), 0)
	window := min(1024, (16<<20)/len(body))
	credits := make([]chan struct{}, subs)
	done := make(chan error, subs)
	for k := range subs {
		sub := socktest.Dial(b, addr)
		connOf(b, s, sub)
		credits[k] = make(chan struct{}, window)
		for range window {
			credits[k] <- struct{}{}
		}
		go func() {
			for i := 0; i < b.N; i++ {
				_ = sub.SetReadDeadline(time.Now().Add(socktest.Timeout))
				if _, err := sub.Recv(); err != nil {
					done <- err
					return
				}
				credits[k] <- struct{}{}
			}
			done <- nil
		}()
	}

	const batchSize = 64
	frames := make([][]byte, 0, batchSize)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	st0 := s.Stats()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for _, c := range credits {
			<-c
		}
		if !batch {
			if err := pub.Send(body); err != nil {
				b.Fatal(err)
			}
			continue
		}
		frames = append(frames, body)
		if len(frames) == batchSize || len(credits[0]) == 0 || i == b.N-1 {
			if err := pub.SendMany(frames); err != nil {
				b.Fatal(err)
			}
			frames = frames[:0]
		}
	}
	endRelayBench(b, s, st0, start, done, subs, subs > 1)
}

// endRelayBench waits for the subscribers' n results on done, reports the
// published frames per second since start and, with writes, the server's
// direct writes and writer starts per frame since st0, and fails the
// benchmark if the server dropped any frame.
func endRelayBench(b *testing.B, s *Server, st0 Stats, start time.Time, done <-chan error, n int, writes bool) {
	b.Helper()
	for range n {
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "frames/s")
	st := s.Stats()
	if writes {
		b.ReportMetric(float64(st.DirectWrites-st0.DirectWrites)/float64(b.N), "directwrites/frame")
		b.ReportMetric(float64(st.WriterStarts-st0.WriterStarts)/float64(b.N), "writerstarts/frame")
	}
	if d := st.Drops[DropQueueFull]; d != 0 {
		b.Fatalf("%d frames dropped", d)
	}
}

// BenchmarkDeliverMatch measures Deliver's matching over 100 connections
// with learnt interests, none of which wants the frame.
func BenchmarkDeliverMatch(b *testing.B) {
	s, addr := startServer(b, quietConfig(), nil)
	for i := range 100 {
		c := socktest.Dial(b, addr)
		connOf(b, s, c)
		socktest.Send(b, c, socktest.Hello(b, socktest.UUID(byte(i)), "listener", fmt.Sprintf("/robot%d/arm/", i)))
	}
	testutil.WaitFor(b, socktest.Timeout, "interests", func() bool { return !s.Interest().All })
	sc := pythonFrameScope(b)
	b.ReportAllocs()
	for b.Loop() {
		if n := s.Deliver(socktest.PythonFrame, sc, 0); n != 0 {
			b.Fatalf("delivered to %d", n)
		}
	}
}

// BenchmarkRelayRoundTrip measures a ping-pong through the server: the
// pinger sends a frame on /bench/ping/, the ponger reads it and sends it
// back on its own connection, one frame outstanding. It reports the round
// trip's p50 and p99.
func BenchmarkRelayRoundTrip(b *testing.B) {
	s, addr := startServer(b, quietConfig(), nil)
	ping, pong := socktest.Dial(b, addr), socktest.Dial(b, addr)
	connOf(b, s, ping)
	connOf(b, s, pong)
	body := socktest.Notification(b, "/bench/ping/", "bytes", bytes.Repeat([]byte{'p'}, 64), 0)
	// The ponger's echo reaches the pinger too: it is the pong.
	rttstat.PingPong(b, ping, pong, body)
}

// BenchmarkRelayFanOut measures 64-byte frames from one publisher (batches
// of 64, as in BenchmarkRelay) to every one of subs subscriber connections
// (each interested in everything), so the publisher's reader forwards each
// frame to all of them in turn. frames/s counts published frames.
func BenchmarkRelayFanOut(b *testing.B) {
	for _, subs := range []int{1, 2, 4, 16} {
		b.Run(fmt.Sprintf("subs=%d", subs), func(b *testing.B) { benchRelayTo(b, 64, true, subs) })
	}
}
