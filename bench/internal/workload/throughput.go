package workload

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/bench/internal/bus"
	"github.com/rsbd/rsbd/bench/internal/stats"
)

// Progress messages of Receive.
const (
	ProgressArmed  = "armed"  // subscriptions are registered
	ProgressProbed = "probed" // a probe arrived on every topic
)

// RecvArgs configures a throughput receiver.
type RecvArgs struct {
	// Topics to subscribe; the sender spreads events over them in turn.
	Topics []string `json:"topics"`
	// N measured events and Warm warm-up events are expected.
	N    int `json:"n"`
	Warm int `json:"warm"`
	// Idle ends the wait when nothing arrived for this long (loss).
	Idle time.Duration `json:"idle"`
	// ProbeTimeout bounds the wait for the first probe on every topic.
	ProbeTimeout time.Duration `json:"probe_timeout"`
	// Limit bounds the wait after the probes (0 = none): a run still
	// receiving then is cut short and marked TimedOut.
	Limit time.Duration `json:"limit"`
	// AckEvery, if positive, makes the receiver of a windowed run report
	// every AckEvery-th arrival to the sender.
	AckEvery int `json:"ack_every,omitempty"`
}

// RecvResult is what a receiver saw.
type RecvResult struct {
	N        int   `json:"n"`
	Received int64 `json:"received"` // distinct measured events
	Dups     int64 `json:"dups"`
	// Misrouted counts measured events that arrived on another topic than
	// the one they were published on, or with an index out of range.
	Misrouted int64 `json:"misrouted,omitempty"`
	Warm      int64 `json:"warm"`
	Lost      int64 `json:"lost"`      // N - Received
	WarmLost  int64 `json:"warm_lost"` // warm-up events that never came
	// LossReports is what the endpoint reported lost: datagrams of rsbd's
	// streams, events a Go client's listeners dropped.
	LossReports int64 `json:"loss_reports"`
	// Elapsed is from the first to the last measured arrival.
	Elapsed time.Duration `json:"elapsed"`
	// Rate is measured events per second over Elapsed.
	Rate float64 `json:"rate"`
	// TimedOut says the run hit RecvArgs.Limit while events still came.
	TimedOut bool `json:"timed_out,omitempty"`
}

// receiver counts arrivals; its handlers may run on several goroutines.
// The counters live in a few padded shards, a topic's in shard topic mod
// len(shards), so that the goroutines of a bus that delivers different
// topics on different goroutines (a connection or subscription each)
// rarely contend for them, while a run over thousands of topics touches
// no more counter memory than a run over 64: the instrument's own cost
// must not grow with the topics it measures. Which measured events arrived
// is one bitmap over all topics, each topic's bits together.
type receiver struct {
	n      int
	base   time.Time
	shards []shard
	// seen says a probe arrived, per topic; its length is the topic count.
	seen []atomic.Bool
	// bits holds topic t's arrivals in words [t*words, (t+1)*words): the
	// sender publishes measured event i on topic i mod topics, so its
	// arrival is bit i / topics of its topic's words; an event on another
	// topic is counted misrouted.
	bits   []atomic.Uint64
	words  int
	probed atomic.Int64
	total  atomic.Int64 // warm-up and measured arrivals, for the Acker
	acker  *Acker
}

// maxShards bounds the receiver's counter shards.
const maxShards = 64

// shard counts what arrived on its topics.
type shard struct {
	received  atomic.Int64
	dups      atomic.Int64
	misrouted atomic.Int64
	warm      atomic.Int64
	first     atomic.Int64 // ns since base, 0 = none yet
	last      atomic.Int64
	lastAny   atomic.Int64
	_         [72]byte // keeps neighbouring shards off each other's cache lines
}

func newReceiver(n, topics int, acker *Acker) *receiver {
	per := (n + topics - 1) / topics
	words := (per + 63) / 64
	return &receiver{n: n, base: time.Now(), acker: acker,
		shards: make([]shard, min(topics, maxShards)), seen: make([]atomic.Bool, topics),
		bits: make([]atomic.Uint64, topics*words), words: words}
}

func (r *receiver) now() int64 { return int64(time.Since(r.base)) + 1 }

func (r *receiver) handler(topic int) bus.Handler {
	sh := &r.shards[topic%len(r.shards)]
	return func(p []byte) {
		h, err := ParseHeader(p)
		if err != nil {
			return
		}
		now := r.now()
		sh.lastAny.Store(now)
		switch h.Kind {
		case KindProbe:
			if !r.seen[topic].Swap(true) {
				r.probed.Add(1)
			}
		case KindWarm:
			sh.warm.Add(1)
			r.acker.note(r.total.Add(1))
		case KindMeasure:
			r.measure(sh, topic, h.Index, now)
			r.acker.note(r.total.Add(1))
		}
	}
}

func (r *receiver) measure(sh *shard, topic int, idx uint64, now int64) {
	t := uint64(len(r.seen))
	if idx >= uint64(r.n) || idx%t != uint64(topic) {
		sh.misrouted.Add(1)
		return
	}
	local := idx / t
	bit := uint64(1) << (local % 64)
	if r.bits[topic*r.words+int(local/64)].Or(bit)&bit != 0 {
		sh.dups.Add(1)
		return
	}
	sh.received.Add(1)
	sh.first.CompareAndSwap(0, now)
	for {
		l := sh.last.Load()
		if now <= l || sh.last.CompareAndSwap(l, now) {
			return
		}
	}
}

// sum adds up field over the shards.
func (r *receiver) sum(field func(*shard) *atomic.Int64) int64 {
	var n int64
	for i := range r.shards {
		n += field(&r.shards[i]).Load()
	}
	return n
}

// span returns the first and last measured arrival over all topics.
func (r *receiver) span() (first, last int64) {
	for i := range r.shards {
		f, l := r.shards[i].first.Load(), r.shards[i].last.Load()
		if f != 0 && (first == 0 || f < first) {
			first = f
		}
		last = max(last, l)
	}
	return first, last
}

// lastAny returns the latest arrival of anything on any topic.
func (r *receiver) lastAny() int64 {
	var l int64
	for i := range r.shards {
		l = max(l, r.shards[i].lastAny.Load())
	}
	return l
}

// Receive subscribes to the topics, reports ProgressArmed, then
// ProgressProbed once every topic carried a probe, and returns when N
// measured events arrived or nothing arrived for args.Idle. A non-nil
// acker reports arrivals to a windowed sender.
func Receive(ctx context.Context, ep bus.Endpoint, a RecvArgs, progress func(any), acker *Acker) (RecvResult, error) {
	if len(a.Topics) == 0 || a.N < 1 {
		return RecvResult{}, errors.New("workload: receive needs topics and N >= 1")
	}
	r := newReceiver(a.N, len(a.Topics), acker)
	for i, t := range a.Topics {
		cancel, err := ep.Subscribe(t, r.handler(i))
		if err != nil {
			return RecvResult{}, fmt.Errorf("subscribe %s: %w", t, err)
		}
		defer cancel()
	}
	lossBase := losses(ep)
	progress(ProgressArmed)
	if err := poll(ctx, defaultDuration(a.ProbeTimeout, 30*time.Second), func() bool {
		return r.probed.Load() == int64(len(a.Topics))
	}); err != nil {
		return RecvResult{}, fmt.Errorf("waiting for probes (%d of %d topics): %w", r.probed.Load(), len(a.Topics), err)
	}
	progress(ProgressProbed)
	probedAt := r.now()
	idle := int64(defaultDuration(a.Idle, 5*time.Second))
	timedOut := false
	err := poll(ctx, 0, func() bool {
		now := r.now()
		switch {
		case r.sum(received) >= int64(a.N):
			return true
		case now-max(probedAt, r.lastAny()) > idle:
			return true
		case a.Limit > 0 && now-probedAt > int64(a.Limit):
			timedOut = true
			return true
		}
		return false
	})
	if err != nil {
		return RecvResult{}, err
	}
	first, last := r.span()
	res := RecvResult{
		TimedOut:    timedOut,
		N:           a.N,
		Received:    r.sum(received),
		Dups:        r.sum(func(s *shard) *atomic.Int64 { return &s.dups }),
		Misrouted:   r.sum(func(s *shard) *atomic.Int64 { return &s.misrouted }),
		Warm:        r.sum(func(s *shard) *atomic.Int64 { return &s.warm }),
		LossReports: losses(ep) - lossBase,
		Elapsed:     time.Duration(last - first),
	}
	res.Lost = int64(a.N) - res.Received
	res.WarmLost = max(int64(a.Warm)-res.Warm, 0)
	res.Rate = stats.Rate(res.Received, r.base.Add(time.Duration(first)), r.base.Add(time.Duration(last)))
	return res, nil
}

// received selects a shard's count of distinct measured events.
func received(s *shard) *atomic.Int64 { return &s.received }

func losses(ep bus.Endpoint) int64 {
	if lc, ok := ep.(bus.LossCounter); ok {
		return lc.Losses()
	}
	return 0
}

func defaultDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// poll checks cond every millisecond until it holds, ctx ends or timeout
// (if positive) passes.
func poll(ctx context.Context, timeout time.Duration, cond func() bool) error {
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("timed out after %v", timeout)
		case <-tick.C:
		}
	}
	return nil
}

// SendArgs configures a throughput sender.
type SendArgs struct {
	Topics []string `json:"topics"`
	N      int      `json:"n"`
	Warm   int      `json:"warm"`
	Size   int      `json:"size"`
	// ProbeEvery is the pause between rounds of probes.
	ProbeEvery time.Duration `json:"probe_every"`
	// Window, if positive, keeps at most Window events in flight, as
	// acknowledged by the receiver's Acker (end-to-end flow control).
	Window int `json:"window,omitempty"`
}

// AckAddr is the progress message of a windowed sender: where the
// receiver's Acker must report.
type AckAddr struct {
	Addr string `json:"ack_addr"`
}

// SendResult is what a sender did.
type SendResult struct {
	Sent    int           `json:"sent"`
	Elapsed time.Duration `json:"elapsed"` // measured phase, until Sync returned
	Rate    float64       `json:"rate"`
}

// Send publishes a probe on every topic each ProbeEvery until start is
// closed, then Warm warm-up and N measured events of Size bytes as fast as
// the endpoint (and the window, if any) accepts them, spread over the
// topics in turn. A windowed sender first reports its AckAddr as progress.
func Send(ctx context.Context, ep bus.Endpoint, a SendArgs, start <-chan struct{}, progress func(any)) (SendResult, error) {
	if len(a.Topics) == 0 {
		return SendResult{}, errors.New("workload: send needs topics")
	}
	pubs, err := bus.Publishers(ep, a.Topics)
	if err != nil {
		return SendResult{}, err
	}
	var w *window
	if a.Window > 0 {
		if w, err = listenWindow(a.Window); err != nil {
			return SendResult{}, err
		}
		defer w.close()
		progress(AckAddr{Addr: w.addr()})
	}
	p := NewPayload(a.Size)
	every := defaultDuration(a.ProbeEvery, 5*time.Millisecond)
	for probing := true; probing; {
		for _, pub := range pubs {
			PutHeader(p, Header{Kind: KindProbe})
			if err := pub(p); err != nil {
				return SendResult{}, fmt.Errorf("probe: %w", err)
			}
		}
		if err := ep.Flush(); err != nil {
			return SendResult{}, err
		}
		t := time.NewTimer(every)
		select {
		case <-start:
			probing = false
		case <-ctx.Done():
			t.Stop()
			return SendResult{}, ctx.Err()
		case <-t.C:
		}
		t.Stop()
	}
	b := &burster{ctx: ctx, ep: ep, pubs: pubs, p: p, w: w}
	if err := b.run(KindWarm, a.Warm); err != nil {
		return SendResult{}, fmt.Errorf("warm-up: %w", err)
	}
	t0 := time.Now()
	if err := b.run(KindMeasure, a.N); err != nil {
		return SendResult{}, err
	}
	if err := ep.Sync(); err != nil {
		return SendResult{}, err
	}
	el := time.Since(t0)
	return SendResult{Sent: a.N, Elapsed: el, Rate: float64(a.N) / el.Seconds()}, nil
}

// burster publishes runs of events, within the window if there is one.
type burster struct {
	ctx  context.Context
	ep   bus.Endpoint
	pubs []func([]byte) error // one per topic, in turn
	p    []byte
	w    *window
	sent int64
}

func (b *burster) run(kind Kind, n int) error {
	for i := 0; i < n; i++ {
		if i%256 == 0 && b.ctx.Err() != nil {
			return b.ctx.Err()
		}
		if b.w != nil && b.w.full(b.sent) {
			if err := b.ep.Flush(); err != nil {
				return err
			}
			if err := b.w.wait(b.ctx, b.sent); err != nil {
				return err
			}
		}
		PutHeader(b.p, Header{Kind: kind, Index: uint64(i)})
		if err := b.pubs[i%len(b.pubs)](b.p); err != nil {
			return err
		}
		b.sent++
	}
	return b.ep.Flush()
}
