package main

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rsbd/rsbd/bench/internal/agent"
	"github.com/rsbd/rsbd/bench/internal/report"
)

func scopesKey(k int) string    { return fmt.Sprintf("scopes/%d", k) }
func listenersKey(k int) string { return fmt.Sprintf("listeners/%d", k) }
func sharedKey(k int) string    { return fmt.Sprintf("listeners-shared/%d", k) }
func spreadKey(k int) string    { return fmt.Sprintf("listeners-spread/%d", k) }
func natsSubsKey(k int) string  { return fmt.Sprintf("nats-subs/%d", k) }

// natsMuxKey names NATS with k subjects subscribed over conns connections.
func natsMuxKey(k, conns int) string { return fmt.Sprintf("nats-mux/%d/%d", k, conns) }

// natsMuxLayouts are the NATS counterparts of the rsbd layouts that carry
// many listeners over few connections: the largest listener step over one
// connection and over spreadConns.
func (r *runner) natsMuxLayouts() [][2]int {
	maxL := r.p.listeners[len(r.p.listeners)-1]
	var ls [][2]int
	if len(r.p.sharedListeners) > 0 {
		ls = append(ls, [2]int{maxL, 1})
	}
	if r.p.spreadConns > 1 {
		ls = append(ls, [2]int{maxL, r.p.spreadConns})
	}
	return ls
}

// openKey is the key of a listener step's open-loop runs.
func openKey(key string) string { return key + "/open" }

const (
	memSubKey         = "mem/sub"
	memListenerKey    = "mem/listener"
	memParticipantKey = "mem/participant"
)

// listenerLayout is how one listener step spreads its listeners.
type listenerLayout struct {
	key   string
	what  string // for logs and profile names
	k     int    // listeners, one scope and Hello participant each
	conns int    // socket connections they are spread over, in turn
	// mem also measures the daemon's heap per connection.
	mem bool
}

// listenerLayouts lists the listener steps: one connection per listener,
// all on one connection, and the largest step over spreadConns.
func (r *runner) listenerLayouts() []listenerLayout {
	var ls []listenerLayout
	maxK := r.p.listeners[len(r.p.listeners)-1]
	for _, k := range r.p.listeners {
		ls = append(ls, listenerLayout{key: listenersKey(k), what: fmt.Sprintf("%d listeners", k), k: k, conns: k, mem: k == maxK})
	}
	for _, k := range r.p.sharedListeners {
		ls = append(ls, listenerLayout{key: sharedKey(k), what: fmt.Sprintf("%d listeners on 1 connection", k), k: k, conns: 1})
	}
	if r.p.spreadConns > 1 {
		ls = append(ls, listenerLayout{key: spreadKey(maxK), k: maxK, conns: r.p.spreadConns,
			what: fmt.Sprintf("%d listeners on %d connections", maxK, r.p.spreadConns)})
	}
	return ls
}

// topicsOf returns k distinct scopes under prefix.
func topicsOf(prefix string, k int) []string {
	ts := make([]string, k)
	for i := range ts {
		ts[i] = fmt.Sprintf("%s%05d/", prefix, i) // one length in every row
	}
	return ts
}

// medianRun returns the run of median rate, its note listing every run's
// rate; a failed run (lost events, an error) is the figure instead, as a
// reliable run that loses events is a failure, not a slow run.
func medianRun(runs []report.Figure) report.Figure {
	for _, f := range runs {
		if f.Failed {
			return f
		}
	}
	if len(runs) == 1 {
		return runs[0]
	}
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b report.Figure) int { return cmp.Compare(a.Value, b.Value) })
	med := sorted[len(sorted)/2]
	rates := make([]string, len(runs))
	for i, f := range runs {
		rates[i] = report.FormatCount(f.Value)
	}
	med.Note = fmt.Sprintf("median of %d runs (%s msg/s); the median run: %s", len(runs), strings.Join(rates, ", "), med.Note)
	return med
}

// stageScaling measures one daemon with many scopes and many listeners and
// the memory of an idle subscription.
func (r *runner) stageScaling() error {
	if r.latOnly {
		return nil // no round trips
	}
	d, err := r.spawn("scale-daemon", roleServer)
	if err != nil {
		return err
	}
	var p *agent.Process
	defer func() { r.closeAll(p, d) }()
	c := r.nodeConfig()
	c.Socket = true
	// Room for the idle participants of one connection (the default bound,
	// rsbsocket.DefaultMaxParticipants, is 4096 per connection).
	c.MaxParticipants = max(r.p.idleListeners+100, 4096)
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
	// The scope steps run interleaved, scopeRounds rounds, so that a slow
	// moment of the machine spoils one run of one step, not a ratio. A
	// first round is not counted: the freshly started daemon grows its
	// heap and buffers in it, which would weigh on the first step only.
	runs := map[int][]report.Figure{}
	for rep := -1; rep < r.p.scopeRounds; rep++ {
		for _, k := range r.p.scopes {
			fig, ok := r.throughput(thrRun{
				label: fmt.Sprintf("scopes %d", k), send: p, recv: d, procs: []*agent.Process{d},
				topics: topicsOf(fmt.Sprintf("/bench/sc/%05d/", k), k),
				size:   r.p.scaleSize, n: r.p.scaleCount, warm: r.p.scaleCount / 10,
				window: windowFor(r.p.scaleSize),
			})
			if rep < 0 && !fig.Failed { // a failed warm-up run fails the step
				r.logThr(fmt.Sprintf("%d scopes (warm-up round, not counted)", k), r.p.scaleSize, fig)
			} else {
				runs[k] = append(runs[k], fig)
				r.logThr(fmt.Sprintf("%d scopes (round %d of %d)", k, rep+1, r.p.scopeRounds), r.p.scaleSize, fig)
			}
			if !ok {
				err := errors.New("skipped: an earlier run left the sender stuck")
				r.failScaling(err)
				return err
			}
		}
	}
	for _, k := range r.p.scopes {
		r.set(scopesKey(k), medianRun(runs[k]))
	}
	for _, l := range r.listenerLayouts() {
		if err := r.listenerStep(d, p, rd.Socket, l); err != nil {
			r.failScaling(err)
			return err
		}
	}
	r.idleParticipants(d, rd.Socket)
	r.closeAll(p, d)
	p, d = nil, nil
	return r.natsScaling()
}

func (r *runner) failScaling(err error) {
	keys := []string{memSubKey, memListenerKey, memParticipantKey}
	for _, k := range r.p.scopes {
		keys = append(keys, scopesKey(k))
	}
	for _, l := range r.listenerLayouts() {
		keys = append(keys, l.key, openKey(l.key))
	}
	for _, k := range r.p.natsConns {
		keys = append(keys, natsSubsKey(k))
	}
	for _, l := range r.natsMuxLayouts() {
		keys = append(keys, natsMuxKey(l[0], l[1]))
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

// listenerStep measures l.k socket listeners (each on its own scope,
// spread over l.conns connections) fed round-robin by one publisher, and,
// if l.mem, the daemon's heap per listener connection.
func (r *runner) listenerStep(d, p *agent.Process, addr string, l listenerLayout) error {
	la, err := r.spawn(strings.ReplaceAll(l.what, " ", "-"), roleSub)
	if err != nil {
		return err
	}
	defer r.closeAll(la)
	var m0, m1 memResult
	if l.mem {
		if err := d.Do("memstats", nil, setupTimeout, &m0); err != nil {
			return err
		}
	}
	if err := la.Do("socket", addrArgs{Addr: addr, Conns: l.conns}, setupTimeout*2, nil); err != nil {
		return err
	}
	t := thrRun{
		label: l.what, send: p, recv: la, procs: []*agent.Process{d},
		topics: topicsOf(fmt.Sprintf("/bench/ls/%04d/%05d/", l.conns, l.k), l.k),
		size:   r.p.scaleSize, n: r.p.scaleCount, warm: r.p.scaleCount / 10,
		window: windowFor(r.p.scaleSize),
	}
	if l.mem {
		t.armed = func() {
			if err := d.Do("memstats", nil, setupTimeout, &m1); err != nil {
				r.logf("memstats: %v", err)
			}
		}
	}
	var runs, open []report.Figure
	ok := true
	for rep := 0; rep < r.p.scaleReps && ok; rep++ {
		var fig report.Figure
		fig, ok = r.throughput(t)
		t.armed = nil // the memory figure comes from the first run
		runs = append(runs, fig)
		r.logThr(fmt.Sprintf("%s (run %d of %d)", l.what, rep+1, r.p.scaleReps), r.p.scaleSize, fig)
	}
	// The same layout open loop: only the system's own flow control (the
	// daemon makes the publisher wait for a full subscriber queue).
	t.window = 0
	for rep := 0; rep < r.p.scaleReps && ok; rep++ {
		var fig report.Figure
		fig, ok = r.throughput(t)
		open = append(open, fig)
		r.logThr(fmt.Sprintf("%s, open loop (run %d of %d)", l.what, rep+1, r.p.scaleReps), r.p.scaleSize, fig)
	}
	r.set(l.key, medianRun(runs))
	if len(open) > 0 {
		r.set(openKey(l.key), medianRun(open))
	}
	if l.mem && m1.HeapAlloc > 0 {
		per := (float64(m1.HeapAlloc) - float64(m0.HeapAlloc)) / float64(l.k)
		r.set(memListenerKey, report.Figure{Value: per,
			Note: fmt.Sprintf("daemon's live heap after GC per connection with one announced listener, %d connections", l.k)})
		r.logf("idle socket listener: %.0f B each in the daemon (%d)", per, l.k)
	}
	if !ok {
		return errors.New("an earlier run left the sender stuck")
	}
	return nil
}

// idleParticipants measures the daemon's heap per idle listener
// participant announced over one shared connection: the live heap after
// GC once the connection is up and again once its idleListeners Hellos
// (distinct scopes) have taken effect, divided by the count.
func (r *runner) idleParticipants(d *agent.Process, addr string) {
	fig, err := func() (report.Figure, error) {
		l, err := r.spawn("idle-participants", roleSub)
		if err != nil {
			return report.Figure{}, err
		}
		defer r.closeAll(l)
		var m0, m1 memResult
		var hr holdResult
		if err := l.Do("socket", addrArgs{Addr: addr, Conns: 1}, setupTimeout, nil); err != nil {
			return report.Figure{}, err
		}
		drops0 := r.drops([]*agent.Process{d})
		if err := d.Do("memstats", nil, setupTimeout, &m0); err != nil {
			return report.Figure{}, err
		}
		if err := l.Do("hold", subsArgs{N: r.p.idleListeners, Prefix: "/bench/idlep/"}, setupTimeout*4, &hr); err != nil {
			return report.Figure{}, err
		}
		if err := d.Do("memstats", nil, setupTimeout, &m1); err != nil {
			return report.Figure{}, err
		}
		per := (float64(m1.HeapAlloc) - float64(m0.HeapAlloc)) / float64(hr.N)
		f := report.Figure{Value: per, Note: fmt.Sprintf(
			"daemon's live heap after GC per listener participant, %d Hellos on distinct scopes over one connection (announced in %.2f s; daemon's per-connection participant bound raised to %d from 4096)",
			hr.N, hr.Announce.Seconds(), r.p.idleListeners+100)}
		if delta := dropDelta([]string{d.Name()}, drops0, r.drops([]*agent.Process{d})); delta != "" {
			f.Note += "; rsbd counters: " + delta
		}
		r.logf("idle listener participant on a shared connection: %.0f B each in the daemon (%d); announced in %v, confirmed in %v",
			per, hr.N, hr.Announce, hr.Confirm)
		return f, nil
	}()
	if err != nil {
		fig = failed(err)
	}
	r.set(memParticipantKey, fig)
}

// natsScaling measures NATS with one subscriber connection per subject,
// 1 and many, with the workload of the listener steps, for context.
func (r *runner) natsScaling() error {
	srv, err := r.spawn("scale-nats-server", roleServer)
	if err != nil {
		return err
	}
	var p *agent.Process
	defer func() { r.closeAll(p, srv) }()
	var res addrResult
	if err = srv.Do("nats-server", nil, setupTimeout, &res); err == nil {
		if p, err = r.spawn("scale-nats-pub", rolePub); err == nil {
			err = p.Do("nats", addrArgs{Addr: res.Addr}, setupTimeout, nil)
		}
	}
	if err != nil {
		r.failScaling(err)
		return err
	}
	for _, k := range r.p.natsConns {
		if err := r.natsStep(p, res.Addr, k, k, natsSubsKey(k)); err != nil {
			r.failScaling(err)
			return err
		}
	}
	for _, l := range r.natsMuxLayouts() {
		if err := r.natsStep(p, res.Addr, l[0], l[1], natsMuxKey(l[0], l[1])); err != nil {
			r.failScaling(err)
			return err
		}
	}
	return nil
}

// natsStep measures NATS with k subjects subscribed over conns subscriber
// connections (in turn) and records the figure under key.
func (r *runner) natsStep(p *agent.Process, url string, k, conns int, key string) error {
	s, err := r.spawn(fmt.Sprintf("nats-subs-%d-%d", k, conns), roleSub)
	if err != nil {
		return err
	}
	defer r.closeAll(s)
	if err := s.Do("nats", addrArgs{Addr: url, Conns: conns}, setupTimeout*2, nil); err != nil {
		return err
	}
	label := fmt.Sprintf("NATS %d subscriber connection%s", conns, plural(conns))
	if k != conns {
		label = fmt.Sprintf("NATS %d subjects over %d subscriber connection%s", k, conns, plural(conns))
	}
	fig, ok := r.throughput(thrRun{
		label: label, send: p, recv: s,
		topics: topicsOf(fmt.Sprintf("/bench/ns/%05d/", k), k),
		size:   r.p.scaleSize, n: r.p.scaleCount, warm: r.p.scaleCount / 10,
		window: windowFor(r.p.scaleSize),
	})
	base := r.p.natsConns[0]
	if bf, done := r.figs[natsSubsKey(base)]; done && key != natsSubsKey(base) && bf.OK() && fig.OK() {
		fig.Note += fmt.Sprintf("; %.2f× NATS with %d subject%s on %d connection%s", fig.Value/bf.Value, base, plural(base), base, plural(base))
	}
	r.set(key, fig)
	r.logThr(label, r.p.scaleSize, fig)
	if !ok {
		return errors.New("an earlier run left the sender stuck")
	}
	return nil
}
