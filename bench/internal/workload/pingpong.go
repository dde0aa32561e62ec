package workload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rsbd/rsbd/bench/internal/bus"
	"github.com/rsbd/rsbd/bench/internal/stats"
)

// pongQueue bounds the events a ponger holds between its handler and its
// publishing goroutine.
const pongQueue = 1024

// Pong echoes every event on in to out until stop is called. An endpoint
// that allows it (bus.InlineReplier) replies from inside the handler;
// otherwise the handler copies the payload and a goroutine of the ponger
// publishes it (handlers must not block), as an application would.
func Pong(ep bus.Endpoint, in, out string) (stop func(), err error) {
	if inlineReply(ep) {
		return ep.Subscribe(in, func(p []byte) {
			if ep.Publish(out, p) == nil {
				_ = ep.Flush()
			}
		})
	}
	ch := make(chan []byte, pongQueue)
	cancel, err := ep.Subscribe(in, func(p []byte) {
		select {
		case ch <- append([]byte(nil), p...):
		default: // the pinger has one event outstanding; never reached
		}
	})
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	quit := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case p := <-ch:
				if ep.Publish(out, p) == nil {
					_ = ep.Flush()
				}
			case <-quit:
				return
			}
		}
	}()
	return func() {
		cancel()
		close(quit)
		<-done
	}, nil
}

// PingArgs configures a pinger.
type PingArgs struct {
	// In is where pongs arrive, Out where pings go.
	In  string `json:"in"`
	Out string `json:"out"`
	// N measured and Warm warm-up round trips of Size bytes.
	N    int `json:"n"`
	Warm int `json:"warm"`
	Size int `json:"size"`
	// Timeout is how long one ping waits for its pong before it counts as lost.
	Timeout time.Duration `json:"timeout"`
	// ProbeTimeout bounds the wait for the path to carry a first round trip.
	ProbeTimeout time.Duration `json:"probe_timeout"`
}

// PingResult is the outcome of a pinger.
type PingResult struct {
	Latency  stats.Latency `json:"latency"`
	Lost     int           `json:"lost"`
	WarmLost int           `json:"warm_lost"`
}

// probeBit marks the indexes of probe pings.
const probeBit = 1 << 62

// inlineReply says whether ep's handlers may publish.
func inlineReply(ep bus.Endpoint) bool {
	ir, ok := ep.(bus.InlineReplier)
	return ok && ir.InlineReply()
}

// Ping sends one ping at a time and waits for its pong: probes until one
// comes back, then Warm untimed and N timed round trips. A ping whose pong
// does not come within the timeout counts as lost and the next is sent.
// The raw UDP reference (bus.RoundTripper) writes and reads on this
// goroutine; an endpoint whose handlers may publish (bus.InlineReplier)
// sends each next ping from the pong's handler; any other gets its pongs
// through a channel from the handler.
func Ping(ctx context.Context, ep bus.Endpoint, a PingArgs) (PingResult, error) {
	if a.N < 1 {
		return PingResult{}, errors.New("workload: ping needs N >= 1")
	}
	if _, rt := ep.(bus.RoundTripper); !rt && inlineReply(ep) {
		g := newEventPinger(ep, a)
		cancel, err := ep.Subscribe(a.In, g.handle)
		if err != nil {
			return PingResult{}, err
		}
		defer cancel()
		return g.run(ctx)
	}
	pg := &pinger{ctx: ctx, ep: ep, out: a.Out, p: NewPayload(a.Size)}
	if rt, ok := ep.(bus.RoundTripper); ok {
		pg.rt = rt
	} else {
		pg.got = make(chan uint64, pongQueue)
		cancel, err := ep.Subscribe(a.In, func(p []byte) {
			if h, err := ParseHeader(p); err == nil {
				select {
				case pg.got <- h.Index:
				default:
				}
			}
		})
		if err != nil {
			return PingResult{}, err
		}
		defer cancel()
	}
	if err := pg.probe(defaultDuration(a.ProbeTimeout, 30*time.Second)); err != nil {
		return PingResult{}, err
	}
	timeout := defaultDuration(a.Timeout, 2*time.Second)
	var res PingResult
	for i := 0; i < a.Warm; i++ {
		if _, ok, err := pg.roundTrip(KindPing, uint64(i), timeout); err != nil {
			return res, err
		} else if !ok {
			res.WarmLost++
		}
	}
	rtts := make([]time.Duration, 0, a.N)
	for i := 0; i < a.N; i++ {
		rtt, ok, err := pg.roundTrip(KindPing, uint64(a.Warm+i), timeout)
		if err != nil {
			return res, err
		}
		if !ok {
			res.Lost++
			continue
		}
		rtts = append(rtts, rtt)
	}
	res.Latency = stats.Summarize(rtts)
	return res, nil
}

type pinger struct {
	ctx context.Context
	ep  bus.Endpoint
	rt  bus.RoundTripper // replies read by the pinging goroutine, or
	got chan uint64      // replies handed over by the endpoint's handler
	out string
	p   []byte
}

func (pg *pinger) probe(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for i := uint64(0); time.Now().Before(deadline); i++ {
		_, ok, err := pg.roundTrip(KindProbe, probeBit|i, probeTimeout)
		if err != nil || ok {
			return err
		}
	}
	return fmt.Errorf("no pong within %v", limit)
}

// roundTrip sends one ping and waits for the pong with its index.
func (pg *pinger) roundTrip(kind Kind, idx uint64, timeout time.Duration) (time.Duration, bool, error) {
	t0 := time.Now()
	PutHeader(pg.p, Header{Kind: kind, Index: idx, Sent: t0.UnixNano()})
	if pg.rt != nil {
		ok, err := pg.rt.RoundTrip(pg.p, timeout, func(b []byte) bool {
			h, err := ParseHeader(b)
			return err == nil && h.Index == idx
		})
		return time.Since(t0), ok, err
	}
	if err := pg.ep.Publish(pg.out, pg.p); err != nil {
		return 0, false, err
	}
	if err := pg.ep.Flush(); err != nil {
		return 0, false, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case got := <-pg.got:
			if got == idx {
				return time.Since(t0), true, nil
			}
		case <-t.C:
			return 0, false, nil
		case <-pg.ctx.Done():
			return 0, false, pg.ctx.Err()
		}
	}
}
