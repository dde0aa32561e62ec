package rsbsocket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/internal/sockio"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// bulkFrames returns n distinct frames on /bulk/ with payloads of size
// bytes.
func bulkFrames(t testing.TB, n, size int) [][]byte {
	t.Helper()
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = socktest.Notification(t, "/bulk/", "bytes", bytes.Repeat([]byte{byte(i)}, size), uint32(i))
	}
	return bodies
}

// publish sends bodies open loop on a goroutine; the channel reports the
// outcome.
func publish(pub *sockclient.ClientConn, bodies [][]byte) <-chan error {
	done := make(chan error, 1)
	go func() { done <- sendAll(pub, bodies) }()
	return done
}

// recvAll reads len(want) frames from c and checks they are want, in order.
// Before frame i it calls pause(i).
func recvAll(t testing.TB, c *sockclient.ClientConn, want [][]byte, pause func(i int)) {
	t.Helper()
	for i, w := range want {
		pause(i)
		if got := socktest.Recv(t, c); !bytes.Equal(got, w) {
			t.Fatalf("frame %d differs (%d bytes, want %d)", i, len(got), len(w))
		}
	}
}

// noDrops fails the test when st counts any dropped frame.
func noDrops(t testing.TB, st Stats) {
	t.Helper()
	if st.Drops != [NumDropReasons]uint64{} || st.Stalls != 0 {
		t.Fatalf("frames dropped: %+v", st)
	}
}

// TestForwardSlowReaderLosesNothing: a subscriber that reads slower than an
// open-loop publisher writes (it pauses until the server reports that the
// publisher's reader waits for it) receives every frame, in order: its
// publisher is slowed down instead.
func TestForwardSlowReaderLosesNothing(t *testing.T) {
	cfg := quietConfig()
	cfg.QueueFrames = 64
	cfg.StallTimeout = socktest.Timeout // a pause never counts as a stall here
	s, addr := startSmallBufServer(t, cfg, nil)
	pub, sub := socktest.Dial(t, addr), dialSlow(t, addr)
	connOf(t, s, pub)
	connOf(t, s, sub)

	const n, pauseEvery = 3000, 500
	bodies := bulkFrames(t, n, 1<<10)
	published := publish(pub, bodies)
	var waits uint64
	recvAll(t, sub, bodies, func(i int) {
		if i%pauseEvery != 0 {
			return
		}
		testutil.WaitFor(t, socktest.Timeout, "the publisher to wait for the subscriber", func() bool {
			if st := s.Stats(); st.Waits > waits {
				waits = st.Waits
				return true
			}
			select {
			case err := <-published:
				published = nil
				if err != nil {
					t.Fatalf("publisher: %v", err)
				}
				return true
			default:
				return published == nil
			}
		})
	})
	if published != nil {
		if err := <-published; err != nil {
			t.Fatalf("publisher: %v", err)
		}
	}
	// The writer counts a frame after its write returns.
	testutil.WaitFor(t, socktest.Timeout, "frames out", func() bool { return s.Stats().FramesOut == n })
	st := s.Stats()
	noDrops(t, st)
	if st.Waits == 0 || st.FramesIn != n {
		t.Fatalf("stats %+v", st)
	}
	t.Logf("%d frames, the publisher waited %d times", n, st.Waits)
}

// TestForwardStalledReaderCostsOneStallTimeout: a subscriber that never
// reads makes an open-loop publisher wait once, for StallTimeout; then it is
// stalled, its frames are dropped without waiting, and the subscriber that
// reads receives every frame.
func TestForwardStalledReaderCostsOneStallTimeout(t *testing.T) {
	cfg := quietConfig()
	cfg.QueueFrames = 64
	cfg.StallTimeout = 500 * time.Millisecond // the reading client never takes that long
	s, addr := startSmallBufServer(t, cfg, nil)
	pub, fast, stalled := socktest.Dial(t, addr), socktest.Dial(t, addr), dialSlow(t, addr)
	connOf(t, s, pub)
	connOf(t, s, fast)
	idStalled := connOf(t, s, stalled)

	const n = 3000
	bodies := bulkFrames(t, n, 1<<10)
	start := time.Now()
	published := publish(pub, bodies)
	recvAll(t, fast, bodies, func(int) {})
	took := time.Since(start)
	if err := <-published; err != nil {
		t.Fatalf("publisher: %v", err)
	}
	st := s.Stats()
	// A never-reading client never drains, so every wait for it ends in a
	// stall: one stall means the publisher waited for it once.
	if st.Stalls != 1 || st.Drops[DropQueueFull] == 0 || st.ConnsCurrent != 3 {
		t.Fatalf("stats %+v", st)
	}
	for _, ci := range s.Connections() {
		if ci.Stalled != (ci.ID == idStalled) {
			t.Fatalf("connection %d: stalled %v", ci.ID, ci.Stalled)
		}
	}
	t.Logf("%d frames reached the reading client in %v with StallTimeout %v; %d dropped for the stalled one",
		n, took.Round(time.Millisecond), cfg.StallTimeout, st.Drops[DropQueueFull])
}

// TestForwardStalledReaderDisconnected: under SlowClientDisconnect a
// stalled subscriber is disconnected; the other one receives everything.
func TestForwardStalledReaderDisconnected(t *testing.T) {
	cfg := quietConfig()
	cfg.QueueFrames = 64
	cfg.StallTimeout = 500 * time.Millisecond
	cfg.SlowClientPolicy = SlowClientDisconnect
	rec := &recorder{}
	s, addr := startSmallBufServer(t, cfg, rec)
	pub, fast, stalled := socktest.Dial(t, addr), socktest.Dial(t, addr), dialSlow(t, addr)
	connOf(t, s, pub)
	connOf(t, s, fast)
	idStalled := connOf(t, s, stalled)

	bodies := bulkFrames(t, 2000, 1<<10)
	published := publish(pub, bodies)
	recvAll(t, fast, bodies, func(int) {})
	if err := <-published; err != nil {
		t.Fatalf("publisher: %v", err)
	}
	if got := rec.waitDisconnect(t, idStalled); got != DisconnectSlowClient {
		t.Fatalf("stalled client disconnected for %v", got)
	}
	if st := s.Stats(); st.Stalls != 1 || st.ConnsCurrent != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// waitingServer starts a server with a StallTimeout of an hour and a
// publisher whose reader waits for a never-reading subscriber; it returns
// once the reader waits.
func waitingServer(t *testing.T, h Handler) (s *Server, addr string, pub, stalled *sockclient.ClientConn, published <-chan error) {
	t.Helper()
	cfg := quietConfig()
	cfg.QueueFrames = 64
	cfg.StallTimeout = time.Hour
	s, addr = startSmallBufServer(t, cfg, h)
	pub, stalled = socktest.Dial(t, addr), dialSlow(t, addr)
	connOf(t, s, pub)
	id := connOf(t, s, stalled)
	published = publish(pub, bulkFrames(t, 2000, 1<<10))
	// The reader may wait a few times while the kernel buffers still take
	// frames; once they are full, the queue stays at its high watermark
	// and the reader waits for good.
	testutil.WaitFor(t, socktest.Timeout, "the publisher's reader to wait", func() bool {
		if s.Stats().Waits == 0 {
			return false
		}
		for _, ci := range s.Connections() {
			if ci.ID == id {
				return ci.QueueFrames >= cfg.QueueFrames*queueHighPercent/100
			}
		}
		return false
	})
	return s, addr, pub, stalled, published
}

// TestForwardWaitEnds: a reader waiting for room returns at once when the
// server closes or shuts down or the subscriber goes away, whatever
// StallTimeout.
func TestForwardWaitEnds(t *testing.T) {
	t.Run("close", func(t *testing.T) {
		s, _, _, _, published := waitingServer(t, nil)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		<-published // the connection is gone; whether the last write failed does not matter
		if st := s.Stats(); st.Stalls != 0 || st.ConnsCurrent != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("shutdown", func(t *testing.T) {
		s, _, pub, stalled, published := waitingServer(t, nil)
		shut := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), socktest.Timeout)
			defer cancel()
			shut <- s.Shutdown(ctx)
		}()
		// The waiting frame and the rest are dropped: the subscriber's
		// queue is closed.
		if err := <-published; err != nil {
			t.Fatalf("publisher: %v", err)
		}
		testutil.WaitFor(t, socktest.Timeout, "the publisher's frames to be dropped", func() bool {
			return s.Stats().Drops[DropClosed] > 0 && s.Stats().FramesIn == 2000
		})
		hardClose(t, stalled) // it would never take what is queued for it
		if err := pub.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-shut; err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		if st := s.Stats(); st.Stalls != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("subscriber gone", func(t *testing.T) {
		rec := &recorder{}
		s, addr, pub, stalled, published := waitingServer(t, rec)
		fast := socktest.Dial(t, addr)
		connOf(t, s, fast)
		hardClose(t, stalled)
		if err := <-published; err != nil {
			t.Fatalf("publisher: %v", err)
		}
		marker := socktest.Notification(t, "/marker/", "utf-8-string", []byte("m"), 0)
		socktest.Send(t, pub, marker)
		for {
			if got := socktest.Recv(t, fast); bytes.Equal(got, marker) {
				break
			}
		}
		if st := s.Stats(); st.Stalls != 0 || st.Drops[DropClosed] == 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// TestQueueDepth: the server's queue depth is the sum of its connections'
// send queues, and a connection that goes away takes its frames out of it.
func TestQueueDepth(t *testing.T) {
	s, _, _, stalled, published := waitingServer(t, nil)
	st := s.Stats()
	var frames, bytes uint64
	for _, ci := range s.Connections() {
		frames += uint64(ci.QueueFrames)
		bytes += uint64(ci.QueueBytes)
	}
	if st.QueueFrames == 0 || st.QueueFrames != frames || st.QueueBytes != bytes {
		t.Fatalf("queue depth %d frames, %d bytes; the connections hold %d, %d", st.QueueFrames, st.QueueBytes, frames, bytes)
	}
	if f, b := s.QueueDepth(); uint64(f) != frames || uint64(b) != bytes {
		t.Fatalf("QueueDepth %d, %d; want %d, %d", f, b, frames, bytes)
	}
	hardClose(t, stalled)
	if err := <-published; err != nil {
		t.Fatalf("publisher: %v", err)
	}
	testutil.WaitFor(t, socktest.Timeout, "the closed connection's frames out of the depth", func() bool {
		f, b := s.QueueDepth()
		return f == 0 && b == 0
	})
}

// hardClose resets c's connection without the orderly close.
func hardClose(t *testing.T, c *sockclient.ClientConn) {
	t.Helper()
	if tc, ok := c.NetConn().(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	if err := c.NetConn().Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Fatal(err)
	}
}

// TestForwardLeavesRoomForDeliver: frames from the network (Deliver) still
// reach a subscriber whose queue is at the high watermark with frames
// forwarded from a client (TestSendQueueOfferWatermarks checks the
// headroom itself).
func TestForwardLeavesRoomForDeliver(t *testing.T) {
	s, _, _, _, _ := waitingServer(t, nil)
	for i := range 8 {
		if n := s.Deliver(socktest.PythonFrame, pythonFrameScope(t), 0); n != 2 {
			t.Fatalf("Deliver %d reached %d connections, want 2", i, n)
		}
	}
	if st := s.Stats(); st.Drops[DropQueueFull] != 0 || st.Stalls != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestQueueWatermarks(t *testing.T) {
	tests := []struct {
		maxFrames, maxBytes int
		want                queueLimits
	}{
		{64, 1000, queueLimits{64, 1000, 48, 750, 32, 500, FrameOverhead}},
		{1, 1, queueLimits{1, 1, 1, 1, 1, 1, FrameOverhead}},
		{DefaultQueueFrames, DefaultQueueBytes, queueLimits{1 << 20, 64 << 20, 3 << 18, 48 << 20, 1 << 19, 32 << 20, FrameOverhead}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.maxFrames, tt.maxBytes), func(t *testing.T) {
			if got := newQueueLimits(tt.maxFrames, tt.maxBytes); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestRelayLargeFramesInPieces: frames larger than maxBatchBytes, which the
// server writes in pieces, mixed with small ones arrive intact and in
// order, and the counters add up.
func TestRelayLargeFramesInPieces(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	pub, sub := socktest.Dial(t, addr), socktest.Dial(t, addr)
	connOf(t, s, pub)
	connOf(t, s, sub)
	var bodies [][]byte
	for i, size := range []int{100, 300 << 10, 100, 1<<20 + 3, sockio.MaxBatchBytes, sockio.MaxBatchBytes + 1, 100, 3 << 20} {
		bodies = append(bodies, socktest.Notification(t, "/bulk/", "bytes", bytes.Repeat([]byte{byte(i)}, size), uint32(i)))
	}
	published := publish(pub, bodies)
	recvAll(t, sub, bodies, func(int) {})
	if err := <-published; err != nil {
		t.Fatalf("publisher: %v", err)
	}
	testutil.WaitFor(t, socktest.Timeout, "frames out", func() bool { return s.Stats().FramesOut == uint64(len(bodies)) })
	st := s.Stats()
	noDrops(t, st)
	if st.BytesOut != st.BytesIn || st.QueueFrames != 0 || st.QueueBytes != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestForwardStallOfOneSparesTheNext: a frame finds two subscribers full.
// The first (listening on "/", so the reader waits for it first) never
// reads and is marked stalled after StallTimeout; the second starts
// reading only then. The second gets a StallTimeout of its own, not what
// is left of the first's, so it is not marked stalled and receives every
// frame. The frames are larger than what the sockets buffer, so both
// queues count the same frames (each writer holds the first, unfinished)
// and reach their watermark with the same frame: which of them fills
// first does not depend on how much the kernel took.
func TestForwardStallOfOneSparesTheNext(t *testing.T) {
	cfg := quietConfig()
	cfg.QueueFrames = 64
	cfg.StallTimeout = 2 * time.Second // the late reader's whole margin
	s, addr := startSmallBufServer(t, cfg, nil)
	pub, stalled, late := socktest.Dial(t, addr), dialSlow(t, addr), dialSlow(t, addr)
	connOf(t, s, pub)
	connOf(t, s, stalled)
	connOf(t, s, late)
	socktest.Send(t, stalled, socktest.Hello(t, socktest.UUID(1), "listener", "/"))
	socktest.Send(t, late, socktest.Hello(t, socktest.UUID(2), "listener", "/bulk/"))
	testutil.WaitFor(t, socktest.Timeout, "the interests", func() bool {
		n := 0
		for _, c := range s.Connections() {
			if !c.Interest.All && len(c.Interest.Scopes) > 0 {
				n++
			}
		}
		return n == 2
	})
	bodies := bulkFrames(t, 200, 64<<10)
	published := publish(pub, bodies)
	testutil.WaitFor(t, socktest.Timeout, "the first subscriber to stall", func() bool { return s.Stats().Stalls >= 1 })
	got := 0
	for got < len(bodies) {
		body := recvEvent(t, late)
		if !bytes.Equal(body, bodies[got]) {
			t.Fatalf("frame %d differs (%d bytes)", got, len(body))
		}
		got++
	}
	if err := <-published; err != nil {
		t.Fatalf("publisher: %v", err)
	}
	if st := s.Stats(); st.Stalls != 1 {
		t.Fatalf("%d subscribers marked stalled, want 1: %+v", st.Stalls, st)
	}
}
