package workload

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/bench/internal/bus"
)

// asyncBus is an in-process Endpoint whose handlers run on a delivery
// goroutine per subscription, as a real endpoint's do, and which allows
// publishing from a handler (bus.InlineReplier). drop loses a payload,
// delay holds it back (delivered from a timer, so later payloads may
// overtake it).
type asyncBus struct {
	mu    sync.Mutex
	subs  map[string][]*asyncSub
	drop  func(Header) bool
	delay func(Header) time.Duration
	// published counts Publish calls; inHandler those made while a
	// handler of this bus was running.
	published, inHandler atomic.Int64
	running              atomic.Int64
}

type asyncSub struct {
	b    *asyncBus
	fn   bus.Handler
	ch   chan []byte
	quit chan struct{}
	done chan struct{}
}

func newAsyncBus() *asyncBus { return &asyncBus{subs: map[string][]*asyncSub{}} }

func (b *asyncBus) InlineReply() bool { return true }
func (b *asyncBus) Flush() error      { return nil }
func (b *asyncBus) Sync() error       { return nil }
func (b *asyncBus) Close() error      { return nil }

func (b *asyncBus) Publish(topic string, p []byte) error {
	b.published.Add(1)
	if b.running.Load() > 0 {
		b.inHandler.Add(1)
	}
	h, err := ParseHeader(p)
	if err == nil && b.drop != nil && b.drop(h) {
		return nil
	}
	var d time.Duration
	if err == nil && b.delay != nil {
		d = b.delay(h)
	}
	cp := append([]byte(nil), p...)
	b.mu.Lock()
	subs := append([]*asyncSub(nil), b.subs[topic]...)
	b.mu.Unlock()
	for _, s := range subs {
		if d > 0 {
			time.AfterFunc(d, func() { s.deliver(cp) })
		} else {
			s.deliver(cp)
		}
	}
	return nil
}

func (s *asyncSub) deliver(p []byte) {
	select {
	case s.ch <- p:
	case <-s.quit:
	}
}

func (s *asyncSub) loop() {
	defer close(s.done)
	for {
		select {
		case p := <-s.ch:
			s.b.running.Add(1)
			s.fn(p)
			s.b.running.Add(-1)
		case <-s.quit:
			return
		}
	}
}

func (b *asyncBus) Subscribe(topic string, fn bus.Handler) (func(), error) {
	s := &asyncSub{b: b, fn: fn, ch: make(chan []byte, 64), quit: make(chan struct{}), done: make(chan struct{})}
	b.mu.Lock()
	b.subs[topic] = append(b.subs[topic], s)
	b.mu.Unlock()
	go s.loop()
	return func() {
		b.mu.Lock()
		subs := b.subs[topic]
		for i, x := range subs {
			if x == s {
				b.subs[topic] = append(subs[:i:i], subs[i+1:]...)
				break
			}
		}
		b.mu.Unlock()
		close(s.quit)
		<-s.done
	}, nil
}

// pingOn runs a ponger and a pinger over b.
func pingOn(t *testing.T, b bus.Endpoint, a PingArgs) (PingResult, error) {
	t.Helper()
	stop, err := Pong(b, "/ping/", "/pong/")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a.In, a.Out = "/pong/", "/ping/"
	return Ping(ctx, b, a)
}

func TestEventPingerCountsLoss(t *testing.T) {
	b := newAsyncBus()
	// Warm-up ping 3 and measured ping 20 (the 11th measured) are lost on
	// the way out; pong 40 is lost on the way back.
	var pongs atomic.Int64
	lostPong := func(h Header) bool { return h.Kind == KindPing && h.Index == 40 }
	b.drop = func(h Header) bool {
		if h.Kind == KindPing && (h.Index == 3 || h.Index == 20) {
			return true
		}
		if lostPong(h) && pongs.Add(1) == 2 { // the second copy is the pong
			return true
		}
		return false
	}
	res, err := pingOn(t, b, PingArgs{N: 100, Warm: 10, Size: 64, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost != 2 || res.WarmLost != 1 || res.Latency.Count != 98 {
		t.Fatalf("loss not counted: %+v", res)
	}
	if res.Latency.P50 <= 0 || res.Latency.P99 < res.Latency.P50 {
		t.Fatalf("latency %+v", res.Latency)
	}
	// Every pong and every ping that follows a pong was published from
	// inside a handler; the first probe and the three pings after a loss
	// came from the waiting goroutine.
	if got, all := b.inHandler.Load(), b.published.Load(); got != all-4 {
		t.Fatalf("%d of %d publishes from handlers, want all but 4", got, all)
	}
}

// TestEventPingerIgnoresLatePong delays the pong of ping 15 past its
// timeout, so it arrives while ping 16 waits for its own (delayed, but in
// time) pong: ping 15 is lost and ping 16's round trip is its own.
func TestEventPingerIgnoresLatePong(t *testing.T) {
	const timeout = 200 * time.Millisecond
	b := newAsyncBus()
	var seen15, seen16 atomic.Int64
	b.delay = func(h Header) time.Duration {
		switch {
		case h.Kind != KindPing:
		case h.Index == 15 && seen15.Add(1) == 2: // the pong
			return 300 * time.Millisecond
		case h.Index == 16 && seen16.Add(1) == 2:
			return 150 * time.Millisecond
		}
		return 0
	}
	res, err := pingOn(t, b, PingArgs{N: 30, Warm: 5, Size: 64, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost != 1 || res.WarmLost != 0 || res.Latency.Count != 29 {
		t.Fatalf("late pong: %+v", res)
	}
	// Credited with pong 15, ping 16 would show at most 100 ms.
	if res.Latency.Max < 150*time.Millisecond {
		t.Fatalf("ping 16 took its round trip from the late pong: max %v", res.Latency.Max)
	}
}

func TestEventPingerProbes(t *testing.T) {
	b := newAsyncBus()
	// The first five probes are lost: the path is not up yet.
	b.drop = func(h Header) bool { return h.Kind == KindProbe && h.Index&^probeBit < 5 }
	res, err := pingOn(t, b, PingArgs{N: 20, Warm: 2, Size: 32, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost != 0 || res.WarmLost != 0 || res.Latency.Count != 20 {
		t.Fatalf("lost probes counted as pings: %+v", res)
	}

	dead := newAsyncBus()
	dead.drop = func(Header) bool { return true }
	_, err = pingOn(t, dead, PingArgs{N: 5, Size: 32, ProbeTimeout: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no pong") {
		t.Fatalf("dead path: %v", err)
	}
}

func TestEventPingerCancel(t *testing.T) {
	b := newAsyncBus()
	b.drop = func(h Header) bool { return h.Kind == KindPing } // every ping times out
	ctx, cancel := context.WithCancel(context.Background())
	sub, err := b.Subscribe("/ping/", func(p []byte) {
		if h, err := ParseHeader(p); err == nil && h.Kind == KindProbe {
			_ = b.Publish("/pong/", p)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub()
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = Ping(ctx, b, PingArgs{In: "/pong/", Out: "/ping/", N: 1000, Size: 32, Timeout: time.Hour})
	if err != context.Canceled {
		t.Fatalf("cancelled ping: %v", err)
	}
}
