package workload

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/bench/internal/bus"
)

// memBus is an in-process Endpoint: Publish calls the topic's handlers
// synchronously, unless drop says to lose the payload.
type memBus struct {
	mu   sync.Mutex
	subs map[string][]bus.Handler
	drop func(h Header) bool
}

func newMemBus(drop func(Header) bool) *memBus {
	return &memBus{subs: map[string][]bus.Handler{}, drop: drop}
}

func (m *memBus) Publish(topic string, p []byte) error {
	if h, err := ParseHeader(p); err == nil && m.drop != nil && m.drop(h) {
		return nil
	}
	m.mu.Lock()
	hs := append([]bus.Handler(nil), m.subs[topic]...)
	m.mu.Unlock()
	for _, h := range hs {
		h(p)
	}
	return nil
}

func (m *memBus) Flush() error { return nil }
func (m *memBus) Sync() error  { return nil }
func (m *memBus) Close() error { return nil }

func (m *memBus) Subscribe(topic string, fn bus.Handler) (func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.subs[topic] = append(m.subs[topic], fn)
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.subs, topic)
	}, nil
}

// runThroughput drives one receiver and one sender over b the way the
// benchmark's parent does.
func runThroughput(t *testing.T, b bus.Endpoint, ra RecvArgs, sa SendArgs) (RecvResult, SendResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	progress := make(chan any, 4)
	var acker *Acker
	if ra.AckEvery > 0 {
		acker = NewAcker(ra.AckEvery)
		defer acker.Close()
	}
	type recvOut struct {
		res RecvResult
		err error
	}
	recvDone := make(chan recvOut, 1)
	go func() {
		res, err := Receive(ctx, b, ra, func(v any) { progress <- v }, acker)
		recvDone <- recvOut{res, err}
	}()
	if p := <-progress; p != ProgressArmed {
		t.Fatalf("first progress %v", p)
	}
	start := make(chan struct{})
	sendProgress := make(chan any, 1)
	type sendOut struct {
		res SendResult
		err error
	}
	sendDone := make(chan sendOut, 1)
	go func() {
		res, err := Send(ctx, b, sa, start, func(v any) { sendProgress <- v })
		sendDone <- sendOut{res, err}
	}()
	if sa.Window > 0 {
		aa := (<-sendProgress).(AckAddr)
		if err := acker.SetTarget(aa.Addr); err != nil {
			t.Fatal(err)
		}
	}
	if p := <-progress; p != ProgressProbed {
		t.Fatalf("second progress %v", p)
	}
	close(start)
	ro := <-recvDone
	if ro.err != nil {
		t.Fatal(ro.err)
	}
	so := <-sendDone
	if so.err != nil {
		t.Fatal(so.err)
	}
	return ro.res, so.res
}

func TestThroughputNoLoss(t *testing.T) {
	topics := []string{"/a/", "/b/", "/c/"}
	rr, sr := runThroughput(t, newMemBus(nil),
		RecvArgs{Topics: topics, N: 3000, Warm: 300, Idle: time.Second},
		SendArgs{Topics: topics, N: 3000, Warm: 300, Size: 64, ProbeEvery: time.Millisecond})
	if rr.Received != 3000 || rr.Lost != 0 || rr.WarmLost != 0 || rr.Dups != 0 || rr.Warm != 300 {
		t.Fatalf("receiver: %+v", rr)
	}
	if rr.Rate <= 0 || sr.Sent != 3000 || sr.Rate <= 0 {
		t.Fatalf("rates: receiver %+v sender %+v", rr, sr)
	}
}

func TestThroughputCountsLoss(t *testing.T) {
	drop := func(h Header) bool {
		return (h.Kind == KindMeasure && (h.Index == 7 || h.Index == 999)) || (h.Kind == KindWarm && h.Index == 3)
	}
	rr, _ := runThroughput(t, newMemBus(drop),
		RecvArgs{Topics: []string{"/a/"}, N: 1000, Warm: 10, Idle: 50 * time.Millisecond},
		SendArgs{Topics: []string{"/a/"}, N: 1000, Warm: 10, Size: 32, ProbeEvery: time.Millisecond})
	if rr.Received != 998 || rr.Lost != 2 || rr.WarmLost != 1 {
		t.Fatalf("loss not counted: %+v", rr)
	}
}

func TestThroughputWindowed(t *testing.T) {
	rr, sr := runThroughput(t, newMemBus(nil),
		RecvArgs{Topics: []string{"/w/"}, N: 2000, Warm: 100, Idle: time.Second, AckEvery: AckEvery(16)},
		SendArgs{Topics: []string{"/w/"}, N: 2000, Warm: 100, Size: 64, Window: 16, ProbeEvery: time.Millisecond})
	if rr.Received != 2000 || rr.Lost != 0 || sr.Sent != 2000 {
		t.Fatalf("windowed run: receiver %+v sender %+v", rr, sr)
	}
}

func TestPingPong(t *testing.T) {
	b := newMemBus(func(h Header) bool { return h.Kind == KindPing && h.Index == 20 })
	stop, err := Pong(b, "/ping/", "/pong/")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := Ping(ctx, b, PingArgs{In: "/pong/", Out: "/ping/", N: 100, Warm: 10, Size: 64, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Index 20 is the 11th measured ping (10 warm-up pings come first).
	if res.Lost != 1 || res.WarmLost != 0 || res.Latency.Count != 99 || res.Latency.P50 <= 0 || res.Latency.P99 < res.Latency.P50 {
		t.Fatalf("ping result %+v", res)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	p := NewPayload(10) // grows to HeaderSize
	if len(p) != HeaderSize {
		t.Fatalf("payload of %d bytes", len(p))
	}
	want := Header{Kind: KindMeasure, Index: 1<<40 + 5, Sent: -42}
	PutHeader(p, want)
	got, err := ParseHeader(p)
	if err != nil || got != want {
		t.Fatalf("ParseHeader = %+v, %v", got, err)
	}
	if _, err := ParseHeader(p[:HeaderSize-1]); err != ErrShort {
		t.Fatalf("short payload: %v", err)
	}
}

// twistBus is a memBus that delivers measured event 5 on the other of two
// topics and measured event 9 twice.
type twistBus struct{ *memBus }

func (b twistBus) Publish(topic string, p []byte) error {
	h, err := ParseHeader(p)
	if err == nil && h.Kind == KindMeasure {
		switch h.Index {
		case 5:
			topic = map[string]string{"/a/": "/b/", "/b/": "/a/"}[topic]
		case 9:
			if err := b.memBus.Publish(topic, p); err != nil {
				return err
			}
		}
	}
	return b.memBus.Publish(topic, p)
}

func TestThroughputCountsMisroutedAndDuplicates(t *testing.T) {
	topics := []string{"/a/", "/b/"}
	rr, _ := runThroughput(t, twistBus{newMemBus(nil)},
		RecvArgs{Topics: topics, N: 100, Warm: 10, Idle: 50 * time.Millisecond},
		SendArgs{Topics: topics, N: 100, Warm: 10, Size: 32, ProbeEvery: time.Millisecond})
	if rr.Received != 99 || rr.Lost != 1 || rr.Misrouted != 1 || rr.Dups != 1 {
		t.Fatalf("misrouted or duplicate event not counted: %+v", rr)
	}
}
