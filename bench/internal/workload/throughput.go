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
	Warm     int64 `json:"warm"`
	Lost     int64 `json:"lost"`      // N - Received
	WarmLost int64 `json:"warm_lost"` // warm-up events that never came
	// LossReports is what the endpoint reported lost (rsbd), in datagrams.
	LossReports int64 `json:"loss_reports"`
	// Elapsed is from the first to the last measured arrival.
	Elapsed time.Duration `json:"elapsed"`
	// Rate is measured events per second over Elapsed.
	Rate float64 `json:"rate"`
	// TimedOut says the run hit RecvArgs.Limit while events still came.
	TimedOut bool `json:"timed_out,omitempty"`
}

// receiver counts arrivals; its handler may run on several goroutines.
type receiver struct {
	n        int
	base     time.Time
	seen     []atomic.Bool // per topic: a probe arrived
	probed   atomic.Int64
	bits     []atomic.Uint64
	received atomic.Int64
	dups     atomic.Int64
	warm     atomic.Int64
	first    atomic.Int64 // ns since base, 0 = none yet
	last     atomic.Int64
	lastAny  atomic.Int64
	total    atomic.Int64 // warm-up and measured arrivals, for the Acker
	acker    *Acker
}

func (r *receiver) now() int64 { return int64(time.Since(r.base)) + 1 }

func (r *receiver) handler(topic int) bus.Handler {
	return func(p []byte) {
		h, err := ParseHeader(p)
		if err != nil {
			return
		}
		now := r.now()
		r.lastAny.Store(now)
		switch h.Kind {
		case KindProbe:
			if !r.seen[topic].Swap(true) {
				r.probed.Add(1)
			}
		case KindWarm:
			r.warm.Add(1)
			r.acker.note(r.total.Add(1))
		case KindMeasure:
			r.measure(h.Index, now)
			r.acker.note(r.total.Add(1))
		}
	}
}

func (r *receiver) measure(idx uint64, now int64) {
	if idx >= uint64(r.n) {
		return
	}
	bit := uint64(1) << (idx % 64)
	if r.bits[idx/64].Or(bit)&bit != 0 {
		r.dups.Add(1)
		return
	}
	r.received.Add(1)
	r.first.CompareAndSwap(0, now)
	for {
		l := r.last.Load()
		if now <= l || r.last.CompareAndSwap(l, now) {
			return
		}
	}
}

// Receive subscribes to the topics, reports ProgressArmed, then
// ProgressProbed once every topic carried a probe, and returns when N
// measured events arrived or nothing arrived for args.Idle. A non-nil
// acker reports arrivals to a windowed sender.
func Receive(ctx context.Context, ep bus.Endpoint, a RecvArgs, progress func(any), acker *Acker) (RecvResult, error) {
	if len(a.Topics) == 0 || a.N < 1 {
		return RecvResult{}, errors.New("workload: receive needs topics and N >= 1")
	}
	r := &receiver{n: a.N, base: time.Now(), seen: make([]atomic.Bool, len(a.Topics)), bits: make([]atomic.Uint64, (a.N+63)/64), acker: acker}
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
		case r.received.Load() >= int64(a.N):
			return true
		case now-max(probedAt, r.lastAny.Load()) > idle:
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
	res := RecvResult{
		TimedOut:    timedOut,
		N:           a.N,
		Received:    r.received.Load(),
		Dups:        r.dups.Load(),
		Warm:        r.warm.Load(),
		LossReports: losses(ep) - lossBase,
		Elapsed:     time.Duration(r.last.Load() - r.first.Load()),
	}
	res.Lost = int64(a.N) - res.Received
	res.WarmLost = max(int64(a.Warm)-res.Warm, 0)
	res.Rate = stats.Rate(res.Received, r.base.Add(time.Duration(r.first.Load())), r.base.Add(time.Duration(r.last.Load())))
	return res, nil
}

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
	var w *window
	if a.Window > 0 {
		var err error
		if w, err = listenWindow(a.Window); err != nil {
			return SendResult{}, err
		}
		defer w.close()
		progress(AckAddr{Addr: w.addr()})
	}
	p := NewPayload(a.Size)
	every := defaultDuration(a.ProbeEvery, 5*time.Millisecond)
	for probing := true; probing; {
		for _, t := range a.Topics {
			PutHeader(p, Header{Kind: KindProbe})
			if err := ep.Publish(t, p); err != nil {
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
	b := &burster{ctx: ctx, ep: ep, topics: a.Topics, p: p, w: w}
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
	ctx    context.Context
	ep     bus.Endpoint
	topics []string
	p      []byte
	w      *window
	sent   int64
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
		if err := b.ep.Publish(b.topics[i%len(b.topics)], b.p); err != nil {
			return err
		}
		b.sent++
	}
	return b.ep.Flush()
}
