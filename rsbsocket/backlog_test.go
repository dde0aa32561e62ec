package rsbsocket

import (
	"bytes"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/scope"
)

// TestBacklogged: a client that does not read makes the server report a
// backlog once Deliver filled its queue to the high watermark, and the
// backlog clears when the client reads its queue empty.
func TestBacklogged(t *testing.T) {
	cfg := quietConfig()
	cfg.QueueFrames = 40
	srv, addr := startSmallBufServer(t, cfg, HandlerFunc(func(ConnID, frame.Frame) {}))
	sub := socktest.Dial(t, addr)
	testutil.WaitFor(t, socktest.Timeout, "connection routed", func() bool { return len(srv.Connections()) == 1 })
	if srv.Backlogged() {
		t.Fatal("backlog reported for an empty queue")
	}
	body := socktest.Notification(t, "/b/", "bytes", bytes.Repeat([]byte("x"), 16<<10), 1)
	sc := scope.MustParse("/b/")
	sent := 0
	testutil.WaitFor(t, socktest.Timeout, "backlog", func() bool {
		srv.Deliver(body, sc, 0)
		sent++
		return srv.Backlogged()
	})
	for i := 0; i < sent && srv.Backlogged(); i++ {
		socktest.Recv(t, sub)
	}
	testutil.WaitFor(t, socktest.Timeout, "backlog cleared", func() bool { return !srv.Backlogged() })
}

// TestBackloggedWithin: a reserve moves the byte threshold below the high
// watermark, down to a quarter of the byte bound at most.
func TestBackloggedWithin(t *testing.T) {
	cfg := quietConfig()
	cfg.QueueBytes = 1 << 20
	srv, addr := startSmallBufServer(t, cfg, HandlerFunc(func(ConnID, frame.Frame) {}))
	dialSlow(t, addr)
	testutil.WaitFor(t, socktest.Timeout, "connection routed", func() bool { return len(srv.Connections()) == 1 })
	body := socktest.Notification(t, "/b/", "bytes", bytes.Repeat([]byte("x"), 16<<10), 1)
	sc := scope.MustParse("/b/")
	testutil.WaitFor(t, socktest.Timeout, "queue at half its bound", func() bool {
		srv.Deliver(body, sc, 0)
		_, b := srv.QueueDepth()
		return b >= 1<<19
	})
	if srv.Backlogged() {
		t.Fatal("backlogged below the high watermark")
	}
	if !srv.BackloggedWithin(1 << 19) {
		t.Fatal("not backlogged with half the bound reserved")
	}
	if srv.BackloggedWithin(1 << 10) {
		t.Fatal("backlogged with a small reserve")
	}
	if !srv.BackloggedWithin(1 << 30) {
		t.Fatal("a huge reserve must still leave a quarter of the bound")
	}
}

// TestHeavyQueueCount: the count of queues near a backlog threshold, which
// lets BackloggedWithin skip looking at every connection, rises with a
// client that does not read and falls back to zero when that client is
// gone; a client that keeps up never raises it.
func TestHeavyQueueCount(t *testing.T) {
	cfg := quietConfig()
	cfg.QueueBytes = 1 << 20
	srv, addr := startSmallBufServer(t, cfg, HandlerFunc(func(ConnID, frame.Frame) {}))
	reader := socktest.Dial(t, addr)
	slow := dialSlow(t, addr)
	testutil.WaitFor(t, socktest.Timeout, "connections routed", func() bool { return len(srv.Connections()) == 2 })
	body := socktest.Notification(t, "/b/", "bytes", bytes.Repeat([]byte("x"), 16<<10), 1)
	sc := scope.MustParse("/b/")
	for range 8 { // 128 KiB: below every floor
		srv.Deliver(body, sc, 0)
		socktest.Recv(t, reader)
	}
	if n := srv.heavyQueues.Load(); n != 0 {
		t.Fatalf("%d heavy queues while both queues are short", n)
	}
	testutil.WaitFor(t, socktest.Timeout, "the slow client's queue at a quarter of its bound", func() bool {
		srv.Deliver(body, sc, 0)
		socktest.Recv(t, reader)
		return srv.heavyQueues.Load() == 1
	})
	if !srv.BackloggedWithin(1 << 30) {
		t.Fatal("not backlogged with the whole bound reserved")
	}
	_ = slow.Close()
	testutil.WaitFor(t, socktest.Timeout, "the slow client gone", func() bool { return len(srv.Connections()) == 1 })
	testutil.WaitFor(t, socktest.Timeout, "no heavy queue", func() bool { return srv.heavyQueues.Load() == 0 })
	if srv.BackloggedWithin(1 << 30) {
		t.Fatal("backlogged with no heavy queue")
	}
}
