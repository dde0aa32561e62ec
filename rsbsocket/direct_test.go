package rsbsocket

import (
	"bytes"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/internal/sockio"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// TestForwardWritesDirectly: frames forwarded one at a time to an idle
// subscriber are written by the publisher's reader itself; no writer
// goroutine is started for them.
func TestForwardWritesDirectly(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	pub, sub := socktest.Dial(t, addr), socktest.Dial(t, addr)
	const n = 200
	relayEach(t, s, pub, sub, n)
	st := s.Stats()
	noDrops(t, st)
	if st.DirectWrites != n || st.WriterStarts != 0 {
		t.Fatalf("direct writes %d, writer starts %d; want %d and 0", st.DirectWrites, st.WriterStarts, n)
	}
}

// TestForwardPartialWriteHandsOff: when the socket takes only part of a
// flush (a subscriber with tiny buffers that does not read yet), a writer
// goroutine writes the rest; frames split mid-way arrive whole and in
// order.
func TestForwardPartialWriteHandsOff(t *testing.T) {
	s, pub, sub := slowSubscriberPair(t)
	bodies := make([][]byte, 300)
	for i := range bodies {
		// Odd sizes, so that partial writes end inside headers and bodies.
		bodies[i] = socktest.Notification(t, "/bulk/", "bytes", bytes.Repeat([]byte{byte(i)}, 700+i%13), uint32(i))
	}
	published := publish(pub, bodies)
	testutil.WaitFor(t, socktest.Timeout, "a writer goroutine to take over", func() bool { return s.Stats().WriterStarts > 0 })
	recvAll(t, sub, bodies, func(int) {})
	if err := <-published; err != nil {
		t.Fatalf("publisher: %v", err)
	}
	st := s.Stats()
	noDrops(t, st)
	if st.DirectWrites == 0 {
		t.Fatalf("no direct write: %+v", st)
	}
	testutil.WaitFor(t, socktest.Timeout, "the queue to drain", func() bool { return s.Stats().QueueFrames == 0 })
}

// TestForwardLargeFramesDirect: large frames (written in place after their
// header, in the same writev as the small frames before them) are written
// directly to an idle subscriber, and when the socket takes only part of
// one, a writer goroutine writes the rest; small and large frames arrive
// whole and in order, and the queue's bounds are released exactly.
func TestForwardLargeFramesDirect(t *testing.T) {
	s, pub, sub := slowSubscriberPair(t)
	bodies := make([][]byte, 60)
	for i := range bodies {
		size := 300 + i%7 // small frames between large ones of odd sizes
		if i%3 == 1 {
			size = sockio.CopyMax + 1 + i*4099
		}
		bodies[i] = socktest.Notification(t, "/bulk/", "bytes", bytes.Repeat([]byte{byte(i)}, size), uint32(i))
	}
	published := publish(pub, bodies)
	recvAll(t, sub, bodies, func(int) {})
	if err := <-published; err != nil {
		t.Fatalf("publisher: %v", err)
	}
	st := s.Stats()
	noDrops(t, st)
	if st.DirectWrites == 0 || st.WriterStarts == 0 {
		t.Fatalf("want direct writes and a hand-off: %+v", st)
	}
	testutil.WaitFor(t, socktest.Timeout, "the queue to drain", func() bool {
		st := s.Stats()
		return st.QueueFrames == 0 && st.QueueBytes == 0
	})
}

// TestForwardLargeFrameNoWriter: a large frame forwarded to an idle
// subscriber whose socket takes it whole needs no writer goroutine.
func TestForwardLargeFrameNoWriter(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	pub, sub := socktest.Dial(t, addr), socktest.Dial(t, addr)
	connOf(t, s, pub)
	connIdle(t, s, sub)
	for i := range 20 {
		body := socktest.Notification(t, "/bulk/", "bytes", bytes.Repeat([]byte{byte(i)}, sockio.CopyMax+100), uint32(i))
		socktest.Send(t, pub, body)
		if got := socktest.Recv(t, sub); !bytes.Equal(got, body) {
			t.Fatalf("frame %d differs", i)
		}
	}
	testutil.WaitFor(t, socktest.Timeout, "the last write counted", func() bool { return s.Stats().DirectWrites >= 20 })
	if st := s.Stats(); st.WriterStarts != 0 {
		t.Fatalf("writer starts %d for frames the socket took whole", st.WriterStarts)
	}
}

// slowSubscriberPair starts a server whose sockets have tiny send buffers
// and connects a publisher and a subscriber with a tiny receive buffer, so
// that direct writes to the subscriber are taken only partly.
func slowSubscriberPair(t *testing.T) (s *Server, pub, sub *sockclient.ClientConn) {
	t.Helper()
	cfg := quietConfig()
	cfg.StallTimeout = socktest.Timeout
	s, addr := startSmallBufServer(t, cfg, nil)
	pub, sub = socktest.Dial(t, addr), dialSlow(t, addr)
	connOf(t, s, pub)
	connOf(t, s, sub)
	return s, pub, sub
}

func TestFramesWithin(t *testing.T) {
	bodies := [][]byte{make([]byte, 10), make([]byte, 20), make([]byte, 5)}
	for _, c := range []struct{ w, n, bytes int }{
		{0, 0, 0}, {3, 0, 0}, {13, 0, 0}, {14, 1, 10}, {15, 1, 10},
		{37, 1, 10}, {38, 2, 30}, {46, 2, 30}, {47, 3, 35}, {100, 3, 35},
	} {
		if n, b := framesWithin(bodies, c.w); n != c.n || b != c.bytes {
			t.Errorf("framesWithin(w=%d) = %d, %d; want %d, %d", c.w, n, b, c.n, c.bytes)
		}
	}
}

// TestDeliverBatch: frames queued with DeliverTo are written by Flush, on
// the caller's goroutine for an idle connection, in order.
func TestDeliverBatch(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	sub := socktest.Dial(t, addr)
	connIdle(t, s, sub)
	bodies := bulkFrames(t, 50, 100)
	var b DeliverBatch
	for _, body := range bodies {
		if n := s.DeliverTo(&b, body, pythonFrameScope(t), 0); n != 1 {
			t.Fatalf("DeliverTo queued to %d connections", n)
		}
	}
	if st := s.Stats(); st.DirectWrites != 0 || st.WriterStarts != 0 || st.QueueFrames != 50 {
		t.Fatalf("before Flush: %+v", st)
	}
	b.Flush()
	recvAll(t, sub, bodies, func(int) {})
	testutil.WaitFor(t, socktest.Timeout, "the write counted", func() bool { return s.Stats().DirectWrites > 0 })
	st := s.Stats()
	noDrops(t, st)
	if st.DirectWrites != 1 || st.WriterStarts != 0 {
		t.Fatalf("direct writes %d, writer starts %d; want one write, no writer", st.DirectWrites, st.WriterStarts)
	}
}

// TestDeliverBatchManyTargets: a flush to more than directTargetsMax
// connections starts their writers.
func TestDeliverBatchManyTargets(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	subs := make([]*sockclient.ClientConn, directTargetsMax+2)
	for i := range subs {
		subs[i] = socktest.Dial(t, addr)
		connIdle(t, s, subs[i])
	}
	body := bulkFrames(t, 1, 100)[0]
	var b DeliverBatch
	if n := s.DeliverTo(&b, body, pythonFrameScope(t), 0); n != len(subs) {
		t.Fatalf("DeliverTo queued to %d connections, want %d", n, len(subs))
	}
	b.Flush()
	for _, c := range subs {
		if got := socktest.Recv(t, c); !bytes.Equal(got, body) {
			t.Fatal("frame differs")
		}
	}
	if st := s.Stats(); st.WriterStarts != uint64(len(subs)) || st.DirectWrites != 0 {
		t.Fatalf("writer starts %d, direct writes %d", st.WriterStarts, st.DirectWrites)
	}
}

// TestFlushStateNotesTargetsOnce: frames alternating between a few targets
// note each once, so a flush to them still writes on the reader's own
// goroutine; past directTargetsMax targets the list only grows.
func TestFlushStateNotesTargetsOnce(t *testing.T) {
	var f flushState
	cs := make([]*conn, directTargetsMax+4)
	for i := range cs {
		cs[i] = &conn{}
	}
	for range 50 { // round-robin over three targets
		for _, c := range cs[:3] {
			f.add(c, 10)
		}
	}
	if len(f.targets) != 3 || f.bytes != 1500 {
		t.Fatalf("%d targets, %d bytes; want 3 and 1500", len(f.targets), f.bytes)
	}
	for _, c := range cs[:directTargetsMax] {
		f.add(c, 1)
	}
	if len(f.targets) != directTargetsMax {
		t.Fatalf("%d targets, want %d", len(f.targets), directTargetsMax)
	}
	for range 2 {
		for _, c := range cs {
			f.add(c, 1)
		}
	}
	if len(f.targets) <= directTargetsMax {
		t.Fatalf("%d targets for %d distinct ones: the flush would write them on the reader", len(f.targets), len(cs))
	}
}
