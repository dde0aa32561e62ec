package node

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

// TestPublishQueueBytesConfig: the byte bound has a default and may not
// be negative.
func TestPublishQueueBytesConfig(t *testing.T) {
	if got := DefaultConfig().PublishQueueBytes; got != DefaultPublishQueueBytes {
		t.Fatalf("default PublishQueueBytes %d, want %d", got, DefaultPublishQueueBytes)
	}
	c := DefaultConfig()
	c.PublishQueueBytes = -1
	if err := c.Validate(); err == nil {
		t.Fatal("a negative PublishQueueBytes was accepted")
	}
}

// TestPublishWaitingForRoom: while the engine is held, publishes fill the
// queue; the next one waits for room and ends with its context, leaving
// no pending count behind; once the engine runs again the queued one goes
// out.
func TestPublishWaitingForRoom(t *testing.T) {
	nodes := startNodes(t, 2, func(_ int, c *Config) { c.PublishQueue = 2; c.SocketAddr = "off" })
	a, b := nodes[0], nodes[1]
	var got collector
	defer b.Subscribe(scope.MustParse("/room/"), got.handle)()
	testutil.WaitFor(t, 10*time.Second, "interest", func() bool { return a.interest().Wanted(groupID("/room/")) })

	release := a.eng.Hold() // the engine, and publishes on the caller's goroutine, wait
	held := true
	defer func() {
		if held {
			release()
		}
	}()
	// The queue holds one request (half of PublishQueue); while the engine
	// is held, publishes do not wait for its lock (direct) but queue.
	if err := a.Publish(context.Background(), testutil.Event("/room/", 0, nil)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- a.Publish(ctx, testutil.Event("/room/", 1, nil)) }()
	testutil.WaitFor(t, 10*time.Second, "a publish waiting for room", func() bool {
		return a.eng.Queues().PublishWaiting
	})
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting publish ended with %v", err)
	}
	release()
	held = false
	testutil.WaitFor(t, 10*time.Second, "the queued event", func() bool { return got.len() == 1 })
	if n := a.eng.Queues().PublishesPending; n != 0 {
		t.Fatalf("%d publishes still counted as pending", n)
	}
}

// TestPublishWaitsAtByteBound: with room for many requests but few bytes,
// a publisher of large events waits once the queued events fill the byte
// bound, and goes on once the engine has taken them.
func TestPublishWaitsAtByteBound(t *testing.T) {
	nodes := startNodes(t, 2, func(_ int, c *Config) {
		c.PublishQueue, c.PublishQueueBytes, c.SocketAddr = 1000, 8<<10, "off"
	})
	a, b := nodes[0], nodes[1]
	var got collector
	defer b.Subscribe(scope.MustParse("/bytes/"), got.handle)()
	testutil.WaitFor(t, 10*time.Second, "interest", func() bool { return a.interest().Wanted(groupID("/bytes/")) })
	release := a.eng.Hold()
	held := true
	defer func() {
		if held {
			release()
		}
	}()
	// The queue holds 4 KiB (half of PublishQueueBytes): the first 3 KiB
	// event fits, the second waits.
	if err := a.Publish(context.Background(), testutil.Event("/bytes/", 0, make([]byte, 3<<10))); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- a.Publish(context.Background(), testutil.Event("/bytes/", 1, make([]byte, 3<<10))) }()
	testutil.WaitFor(t, 10*time.Second, "a publish waiting for room", func() bool {
		q := a.eng.Queues()
		return q.PublishWaiting && q.PublishesQueued == 1
	})
	release()
	held = false
	if err := <-errc; err != nil {
		t.Fatalf("waiting publish: %v", err)
	}
	testutil.WaitFor(t, 10*time.Second, "both events", func() bool { return got.len() == 2 })
}

// TestPublishQueueDepthMetric: rsbd_queue_depth{queue="socket_in"} counts
// every publish waiting for the engine: queued, and waiting for room in
// the queue; once the engine runs again it falls to zero.
func TestPublishQueueDepthMetric(t *testing.T) {
	nodes := startNodes(t, 2, func(_ int, c *Config) { c.PublishQueue = 4; c.SocketAddr = "off" })
	a, b := nodes[0], nodes[1]
	var got collector
	defer b.Subscribe(scope.MustParse("/depth/"), got.handle)()
	testutil.WaitFor(t, 10*time.Second, "interest", func() bool { return a.interest().Wanted(groupID("/depth/")) })
	depth := func() float64 { return metricValue(t, a, "rsbd_queue_depth", "queue", "socket_in") }
	release := a.eng.Hold()
	held := true
	defer func() {
		if held {
			release()
		}
	}()
	// The queue holds two requests (half of PublishQueue); the third
	// waits for room.
	for i := range 2 {
		if err := a.Publish(context.Background(), testutil.Event("/depth/", uint32(i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- a.Publish(ctx, testutil.Event("/depth/", 2, nil)) }()
	testutil.WaitFor(t, 10*time.Second, "a publish waiting for room", func() bool {
		return a.eng.Queues().PublishWaiting
	})
	if got := depth(); got != 3 {
		t.Fatalf("depth %v with two publishes queued and one waiting, want 3", got)
	}
	release()
	held = false
	if err := <-errc; err != nil {
		t.Fatalf("waiting publish: %v", err)
	}
	testutil.WaitFor(t, 10*time.Second, "the engine to handle every publish", func() bool { return depth() == 0 })
	testutil.WaitFor(t, 10*time.Second, "the three events", func() bool { return got.len() == 3 })
}

// TestReceiveQueueByteBound: while the engine is busy, received batches
// queue up to ReceiveQueueBytes; a batch that would pass it is dropped
// and counted (queue_full), and one finding the queue empty is taken
// whatever its size.
func TestReceiveQueueByteBound(t *testing.T) {
	nodes := startNodes(t, 1, func(_ int, c *Config) { c.ReceiveQueueBytes = 1000; c.SocketAddr = "off" })
	a := nodes[0]
	// ACKs pass the readers' filter whatever their group; the engine
	// decodes them later.
	ack := func(n int) []transport.Packet {
		ps := make([]transport.Packet, n)
		for i := range ps {
			d := make([]byte, 200)
			d[1] = byte(datagram.KindAck)
			ps[i] = transport.Packet{Data: d}
		}
		return ps
	}
	drops := func() float64 { return metricValue(t, a, "rsbd_drops_total", "reason", "queue_full") }
	before := drops()
	release := a.eng.Hold() // the engine does not take batches, nor may readers handle them
	a.onPackets(ack(8))     // 1600 bytes: past the bound, but the queue is empty
	a.onPackets(ack(2))     // past the bound behind it: dropped
	queued, dropped := a.eng.Queues().ReceivesPending, drops()-before
	release()
	if queued != 1 || dropped != 2 {
		t.Fatalf("%d batches queued and %v datagrams dropped, want 1 and 2", queued, dropped)
	}
	testutil.WaitFor(t, 10*time.Second, "the engine to take the batch", func() bool {
		q := a.eng.Queues()
		return q.ReceivesPending == 0 && q.ReceiveBytes == 0
	})
	release = a.eng.Hold()
	a.onPackets(ack(2)) // the queue has room again
	queued = a.eng.Queues().ReceivesPending
	release()
	if queued != 1 || drops()-before != 2 {
		t.Fatalf("after the engine took the first batch: %d queued, %v dropped", queued, drops()-before)
	}
}
