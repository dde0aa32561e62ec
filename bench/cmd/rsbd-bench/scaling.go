package main

import (
	"errors"
	"fmt"

	"github.com/rsbd/rsbd/bench/internal/agent"
	"github.com/rsbd/rsbd/bench/internal/report"
)

func scopesKey(k int) string    { return fmt.Sprintf("scopes/%d", k) }
func listenersKey(k int) string { return fmt.Sprintf("listeners/%d", k) }

const (
	memSubKey      = "mem/sub"
	memListenerKey = "mem/listener"
)

// topicsOf returns k distinct scopes under prefix.
func topicsOf(prefix string, k int) []string {
	ts := make([]string, k)
	for i := range ts {
		ts[i] = fmt.Sprintf("%s%d/", prefix, i)
	}
	return ts
}

// stageScaling measures one daemon with many scopes and many listeners and
// the memory of an idle subscription.
func (r *runner) stageScaling() error {
	d, err := r.spawn("scale-daemon", roleServer)
	if err != nil {
		return err
	}
	var p *agent.Process
	defer func() { r.closeAll(p, d) }()
	c := randomPool()
	c.Socket = true
	rd, err := startNode(d, c)
	if err == nil {
		p, err = r.spawn("scale-pub", rolePub)
	}
	if err == nil {
		err = p.Do("socket", addrArgs{Addr: rd.Socket}, setupTimeout, nil)
	}
	if err != nil {
		r.failScaling(err)
		return err
	}
	r.idleMemory(d)
	for _, k := range r.p.scopes {
		fig, ok := r.throughput(thrRun{
			label: fmt.Sprintf("scopes %d", k), send: p, recv: d, procs: []*agent.Process{d},
			topics: topicsOf(fmt.Sprintf("/bench/sc/%d/", k), k),
			size:   r.p.scaleSize, n: r.p.scaleCount, warm: r.p.scaleCount / 10,
			window: windowFor(r.p.scaleSize),
		})
		r.set(scopesKey(k), fig)
		r.logThr(fmt.Sprintf("%d scopes", k), r.p.scaleSize, fig)
		if !ok {
			err := errors.New("skipped: an earlier run left the sender stuck")
			r.failScaling(err)
			return err
		}
	}
	for _, k := range r.p.listeners {
		if err := r.listenerStep(d, p, rd.Socket, k); err != nil {
			r.fail(err, listenersKey(k))
			return err
		}
	}
	return nil
}

func (r *runner) failScaling(err error) {
	keys := []string{memSubKey, memListenerKey}
	for _, k := range r.p.scopes {
		keys = append(keys, scopesKey(k))
	}
	for _, k := range r.p.listeners {
		keys = append(keys, listenersKey(k))
	}
	r.fail(err, keys...)
}

// idleMemory measures the heap per idle embedded subscription in the daemon.
func (r *runner) idleMemory(d *agent.Process) {
	var res subsResult
	if err := d.Do("idle-subs", subsArgs{N: r.p.idleSubs, Prefix: "/bench/idle/"}, setupTimeout*4, &res); err != nil {
		r.set(memSubKey, failed(err))
		return
	}
	r.set(memSubKey, report.Figure{Value: res.BytesPerSub,
		Note: fmt.Sprintf("live heap after GC, %d subscriptions on distinct scopes; subscribing them took %.2f s, cancelling %.2f s",
			res.N, res.Subscribe.Seconds(), res.Cancel.Seconds())})
	r.logf("idle subscription: %.0f B each (%d); subscribe %v, cancel %v", res.BytesPerSub, res.N, res.Subscribe, res.Cancel)
}

// listenerStep measures k socket listeners (one connection each, each on
// its own scope) fed round-robin by one publisher, and the daemon's heap
// per listener connection.
func (r *runner) listenerStep(d, p *agent.Process, addr string, k int) error {
	l, err := r.spawn(fmt.Sprintf("listeners-%d", k), roleSub)
	if err != nil {
		return err
	}
	defer r.closeAll(l)
	var m0, m1 memResult
	if err := d.Do("memstats", nil, setupTimeout, &m0); err != nil {
		return err
	}
	if err := l.Do("socket", addrArgs{Addr: addr, Conns: k}, setupTimeout*2, nil); err != nil {
		return err
	}
	fig, ok := r.throughput(thrRun{
		label: fmt.Sprintf("listeners %d", k), send: p, recv: l, procs: []*agent.Process{d},
		topics: topicsOf(fmt.Sprintf("/bench/ls/%d/", k), k),
		size:   r.p.scaleSize, n: r.p.scaleCount, warm: r.p.scaleCount / 10,
		window: windowFor(r.p.scaleSize),
		armed: func() {
			if err := d.Do("memstats", nil, setupTimeout, &m1); err != nil {
				r.logf("memstats: %v", err)
			}
		},
	})
	r.set(listenersKey(k), fig)
	r.logThr(fmt.Sprintf("%d listeners", k), r.p.scaleSize, fig)
	if k == r.p.listeners[len(r.p.listeners)-1] && m1.HeapAlloc > 0 {
		per := (float64(m1.HeapAlloc) - float64(m0.HeapAlloc)) / float64(k)
		r.set(memListenerKey, report.Figure{Value: per,
			Note: fmt.Sprintf("daemon's live heap after GC per connection with one announced listener, %d connections", k)})
		r.logf("idle socket listener: %.0f B each in the daemon (%d)", per, k)
	}
	if !ok {
		return errors.New("an earlier run left the sender stuck")
	}
	return nil
}
