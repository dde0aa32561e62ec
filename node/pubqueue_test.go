package node

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

func reqOfSize(n int) pubReq { return pubReq{size: n} }

// TestPubQueueBoundAndRoom: a full queue refuses a request and hands out a
// channel that the next take closes; take returns the requests in order
// and the queue then takes more.
func TestPubQueueBoundAndRoom(t *testing.T) {
	q := newPubQueue(3, 1<<20)
	for i := range 3 {
		if ok, _ := q.push(reqOfSize(i)); !ok {
			t.Fatalf("push %d refused below the limit", i)
		}
	}
	ok, room := q.push(reqOfSize(3))
	if ok || room == nil {
		t.Fatal("a full queue took a request")
	}
	select {
	case <-room:
		t.Fatal("room before a take")
	default:
	}
	got := q.take(nil)
	if len(got) != 3 || got[0].size != 0 || got[2].size != 2 {
		t.Fatalf("took %v", got)
	}
	select {
	case <-room:
	default:
		t.Fatal("take did not make room for the waiter")
	}
	if ok, _ := q.push(reqOfSize(3)); !ok || q.len() != 1 {
		t.Fatal("no room after a take")
	}
}

// TestPubQueueByteBound: the queue is full once the next event's bytes
// would pass its byte bound, below its count; an empty queue takes any one
// event, however large, so that no event is refused for good.
func TestPubQueueByteBound(t *testing.T) {
	q := newPubQueue(10, 100)
	if ok, _ := q.push(reqOfSize(60)); !ok {
		t.Fatal("an empty queue refused 60 bytes")
	}
	if ok, _ := q.push(reqOfSize(40)); !ok {
		t.Fatal("the queue refused bytes up to its bound")
	}
	ok, room := q.push(reqOfSize(1))
	if ok || room == nil {
		t.Fatal("the queue took bytes past its bound")
	}
	if got := q.take(nil); len(got) != 2 {
		t.Fatalf("took %d requests", len(got))
	}
	select {
	case <-room:
	default:
		t.Fatal("take did not make room")
	}
	if ok, _ := q.push(reqOfSize(500)); !ok {
		t.Fatal("an empty queue refused an event larger than its bound")
	}
	if ok, _ := q.push(reqOfSize(1)); ok {
		t.Fatal("the queue took more behind an event past its bound")
	}
}

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

// TestPubQueueSignalsOnFirst: only a push into an empty queue readies the
// engine, and a take hands the caller's spare memory to the queue.
func TestPubQueueSignalsOnFirst(t *testing.T) {
	q := newPubQueue(8, 1<<20)
	q.push(reqOfSize(1))
	q.push(reqOfSize(2))
	select {
	case <-q.ready:
	default:
		t.Fatal("no signal for the first request")
	}
	select {
	case <-q.ready:
		t.Fatal("a second signal for a queue that was not empty")
	default:
	}
	spare := make([]pubReq, 0, 16)
	if got := q.take(spare); len(got) != 2 {
		t.Fatalf("took %d", len(got))
	}
	q.push(reqOfSize(3))
	if cap(q.items) != 16 {
		t.Fatalf("the queue did not reuse the spare (cap %d)", cap(q.items))
	}
	select {
	case <-q.ready:
	default:
		t.Fatal("no signal after the queue emptied")
	}
}

// TestPubQueueConcurrent: publishers pushing past the bound (waiting for
// room) against a consumer taking batches lose nothing and keep each
// publisher's order.
func TestPubQueueConcurrent(t *testing.T) {
	const pubs, each = 4, 5000
	q := newPubQueue(16, 1<<20)
	var wg sync.WaitGroup
	for p := range pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := pubReq{size: i, scope: scope.MustParse("/p/" + string(rune('a'+p)) + "/")}
				for {
					ok, room := q.push(r)
					if ok {
						break
					}
					<-room
				}
			}
		}()
	}
	next := map[string]int{}
	timeout := time.NewTimer(20 * time.Second)
	defer timeout.Stop()
	var batch []pubReq
	for n := 0; n < pubs*each; {
		select {
		case <-q.ready: // every push into an empty queue signals: none is missed
		case <-timeout.C:
			t.Fatalf("received %d of %d", n, pubs*each)
		}
		batch = q.take(batch[:0])
		for _, r := range batch {
			k := r.scope.String()
			if r.size != next[k] {
				t.Fatalf("%s: request %d after %d", k, r.size, next[k]-1)
			}
			next[k]++
			n++
		}
		clear(batch)
	}
	wg.Wait()
	if q.len() != 0 {
		t.Fatalf("%d requests left", q.len())
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

	a.eng.mu.Lock() // the engine, and publishes on the caller's goroutine, wait
	held := true
	defer func() {
		if held {
			a.eng.mu.Unlock()
		}
	}()
	// The queue holds one request (half of PublishQueue); the publishes
	// that do not go to it wait for the engine's lock (direct) for at most
	// directSpin and then queue.
	if err := a.Publish(context.Background(), testutil.Event("/room/", 0, nil)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- a.Publish(ctx, testutil.Event("/room/", 1, nil)) }()
	testutil.WaitFor(t, 10*time.Second, "a publish waiting for room", func() bool {
		a.eng.pubs.mu.Lock()
		defer a.eng.pubs.mu.Unlock()
		return a.eng.pubs.room != nil
	})
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting publish ended with %v", err)
	}
	a.eng.mu.Unlock()
	held = false
	testutil.WaitFor(t, 10*time.Second, "the queued event", func() bool { return got.len() == 1 })
	if n := a.eng.pubsPending.Load(); n != 0 {
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
	a.eng.mu.Lock()
	held := true
	defer func() {
		if held {
			a.eng.mu.Unlock()
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
		a.eng.pubs.mu.Lock()
		defer a.eng.pubs.mu.Unlock()
		return a.eng.pubs.room != nil && len(a.eng.pubs.items) == 1
	})
	a.eng.mu.Unlock()
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
	a.eng.mu.Lock()
	held := true
	defer func() {
		if held {
			a.eng.mu.Unlock()
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
		a.eng.pubs.mu.Lock()
		defer a.eng.pubs.mu.Unlock()
		return a.eng.pubs.room != nil
	})
	if got := depth(); got != 3 {
		t.Fatalf("depth %v with two publishes queued and one waiting, want 3", got)
	}
	a.eng.mu.Unlock()
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
	a.eng.mu.Lock()     // the engine does not take batches, nor may readers handle them
	a.onPackets(ack(8)) // 1600 bytes: past the bound, but the queue is empty
	a.onPackets(ack(2)) // past the bound behind it: dropped
	queued, dropped := a.eng.rxPending.Load(), drops()-before
	a.eng.mu.Unlock()
	if queued != 1 || dropped != 2 {
		t.Fatalf("%d batches queued and %v datagrams dropped, want 1 and 2", queued, dropped)
	}
	testutil.WaitFor(t, 10*time.Second, "the engine to take the batch", func() bool {
		return a.eng.rxPending.Load() == 0 && a.eng.rxBytes.Load() == 0
	})
	a.eng.mu.Lock()
	a.onPackets(ack(2)) // the queue has room again
	queued = a.eng.rxPending.Load()
	a.eng.mu.Unlock()
	if queued != 1 || drops()-before != 2 {
		t.Fatalf("after the engine took the first batch: %d queued, %v dropped", queued, drops()-before)
	}
}
