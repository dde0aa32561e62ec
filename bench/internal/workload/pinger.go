package workload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rsbd/rsbd/bench/internal/bus"
	"github.com/rsbd/rsbd/bench/internal/stats"
)

// probeTimeout is how long one probe ping waits for its pong.
const probeTimeout = 20 * time.Millisecond

// eventPinger runs a ping-pong driven by the pongs: the pong handler
// records the round trip and sends the next ping on the goroutine that
// delivered the pong, as the raw UDP reference writes its next ping on the
// goroutine that read the echo. The calling goroutine only sleeps until a
// ping's deadline, to count it lost and send the next, or until the run
// ends; it is not woken per ping.
type eventPinger struct {
	ep         bus.Endpoint
	out        string
	warm       int
	total      int // warm-up and measured pings
	timeout    time.Duration
	probeLimit time.Duration
	probeUntil time.Time

	sendMu sync.Mutex // serializes building and publishing a ping in p
	p      []byte

	mu       sync.Mutex
	probing  bool
	probes   uint64 // probes sent
	pos      int    // pings answered or lost so far, after the probe
	waiting  bool   // a ping (or probe) is outstanding
	idx      uint64 // its index
	sent     time.Time
	deadline time.Time
	rtts     []time.Duration
	res      PingResult
	err      error
	finished bool
	done     chan struct{} // closed when finished is set
}

func newEventPinger(ep bus.Endpoint, a PingArgs) *eventPinger {
	limit := defaultDuration(a.ProbeTimeout, 30*time.Second)
	return &eventPinger{
		ep: ep, out: a.Out, warm: a.Warm, total: a.Warm + a.N,
		timeout:    defaultDuration(a.Timeout, 2*time.Second),
		probeLimit: limit,
		probeUntil: time.Now().Add(limit),
		p:          NewPayload(a.Size),
		probing:    true,
		rtts:       make([]time.Duration, 0, a.N),
		done:       make(chan struct{}),
	}
}

// handle is the pong handler: the pong of the outstanding ping ends it
// and sends the next; others (late pongs of lost pings) are ignored.
func (g *eventPinger) handle(b []byte) {
	h, err := ParseHeader(b)
	if err != nil {
		return
	}
	now := time.Now()
	g.mu.Lock()
	if !g.waiting || h.Index != g.idx {
		g.mu.Unlock()
		return
	}
	g.waiting = false
	if g.probing {
		g.probing = false
	} else {
		g.record(now.Sub(g.sent), true)
	}
	g.mu.Unlock()
	g.next()
}

// record counts the end of the ping at pos: answered after rtt, or lost.
// mu is held.
func (g *eventPinger) record(rtt time.Duration, ok bool) {
	switch {
	case g.pos < g.warm:
		if !ok {
			g.res.WarmLost++
		}
	case ok:
		g.rtts = append(g.rtts, rtt)
	default:
		g.res.Lost++
	}
	g.pos++
}

// finishLocked ends the run with err (nil: all pings done). mu is held.
func (g *eventPinger) finishLocked(err error) {
	if g.finished {
		return
	}
	g.finished, g.err = true, err
	close(g.done)
}

// next sends the next probe or ping, or ends the run when every ping is
// done. Only the goroutine that ended the outstanding ping calls it.
func (g *eventPinger) next() {
	g.sendMu.Lock()
	defer g.sendMu.Unlock()
	g.mu.Lock()
	if g.finished || g.waiting {
		g.mu.Unlock()
		return
	}
	kind, idx, timeout := KindPing, uint64(g.pos), g.timeout
	if g.probing {
		kind, idx, timeout = KindProbe, probeBit|g.probes, probeTimeout
		g.probes++
	} else if g.pos >= g.total {
		g.finishLocked(nil)
		g.mu.Unlock()
		return
	}
	now := time.Now()
	g.waiting, g.idx, g.sent, g.deadline = true, idx, now, now.Add(timeout)
	PutHeader(g.p, Header{Kind: kind, Index: idx, Sent: now.UnixNano()})
	g.mu.Unlock()
	err := g.ep.Publish(g.out, g.p)
	if err == nil {
		err = g.ep.Flush()
	}
	if err != nil {
		g.mu.Lock()
		g.finishLocked(err)
		g.mu.Unlock()
	}
}

// expire ends the outstanding ping if its deadline passed and returns how
// long to sleep before looking again (0: the ping expired, send the next).
func (g *eventPinger) expire(now time.Time) (time.Duration, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.finished:
		return -1, nil
	case !g.waiting:
		// A handler is between a pong and its next ping: look again soon.
		return time.Millisecond, nil
	case now.Before(g.deadline):
		return g.deadline.Sub(now), nil
	}
	g.waiting = false
	if g.probing {
		if !now.Before(g.probeUntil) {
			err := fmt.Errorf("no pong within %v", g.probeLimit)
			g.finishLocked(err)
			return -1, err
		}
	} else {
		g.record(0, false)
	}
	return 0, nil
}

// run sends the first probe and waits until the run ends, expiring pings
// whose pong did not come in time.
func (g *eventPinger) run(ctx context.Context) (PingResult, error) {
	g.next()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		wait, err := g.expire(time.Now())
		switch {
		case err != nil:
			return PingResult{}, err
		case wait < 0:
			return g.result()
		case wait == 0:
			g.next()
			continue
		}
		t.Reset(wait)
		select {
		case <-g.done:
			return g.result()
		case <-t.C:
		case <-ctx.Done():
			g.mu.Lock()
			g.finishLocked(ctx.Err())
			g.mu.Unlock()
			return PingResult{}, ctx.Err()
		}
	}
}

func (g *eventPinger) result() (PingResult, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.res, g.err
	}
	res := g.res
	res.Latency = stats.Summarize(g.rtts)
	return res, nil
}
