package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rsbd/rsbd/bench/internal/agent"
	"github.com/rsbd/rsbd/bench/internal/report"
	"github.com/rsbd/rsbd/bench/internal/workload"
)

// Timeouts of the parent's waits for agents.
const (
	setupTimeout = 30 * time.Second
	probeTimeout = 60 * time.Second
	idleTimeout  = 5 * time.Second
)

// thrRun is one throughput measurement.
type thrRun struct {
	label      string // for logs and profile names
	send, recv *agent.Process
	// procs lists the rsbd processes: CPU-profiled with --profile-dir, and
	// their nodes' drop counters are reported when a run fails.
	procs   []*agent.Process
	topics  []string
	size    int
	n, warm int
	// window, if positive, is the end-to-end flow-control window.
	window int
	// armed, if set, runs once the receiver has subscribed.
	armed func()
}

// windowFor is the flow-control window of a payload size: at most 1000
// events or 16 MiB in flight.
func windowFor(size int) int { return max(1, min(1000, (16<<20)/size)) }

// throughput runs one measurement and returns its figure; ok is false when
// the agents are no longer usable (a sender that would not stop).
func (r *runner) throughput(t thrRun) (fig report.Figure, ok bool) {
	ra := workload.RecvArgs{Topics: t.topics, N: t.n, Warm: t.warm, Idle: idleTimeout, ProbeTimeout: probeTimeout, Limit: r.p.limit}
	if t.window > 0 {
		ra.AckEvery = workload.AckEvery(t.window)
	}
	rc := t.recv.Start("recv", ra)
	if err := rc.WaitProgress(setupTimeout+time.Duration(len(t.topics))*time.Millisecond, nil); err != nil {
		return failed(err), true
	}
	if t.armed != nil {
		t.armed()
	}
	sc := t.send.Start("send", workload.SendArgs{Topics: t.topics, N: t.n, Warm: t.warm, Size: t.size, Window: t.window})
	if t.window > 0 {
		var aa workload.AckAddr
		err := sc.WaitProgress(setupTimeout, &aa)
		if err == nil {
			err = t.recv.Do("ackto", addrArgs{Addr: aa.Addr}, setupTimeout, nil)
		}
		if err != nil {
			return failed(err), r.stopSender(t.send, sc)
		}
	}
	if err := rc.WaitProgress(probeTimeout+setupTimeout, nil); err != nil {
		return failed(err), r.stopSender(t.send, sc)
	}
	drops0 := r.drops(t.procs)
	stopProfiles := r.startProfiles(t)
	c0 := readCPU()
	if err := t.send.Do("go", nil, setupTimeout, nil); err != nil {
		stopProfiles()
		return failed(err), false
	}
	var rr workload.RecvResult
	err := rc.Wait(r.p.limit+idleTimeout+setupTimeout, &rr)
	c1 := readCPU()
	stopProfiles()
	if err != nil {
		return failed(err), r.stopSender(t.send, sc)
	}
	var sr workload.SendResult
	ok = true
	if rr.Received < int64(t.n) || rr.TimedOut {
		ok = r.stopSender(t.send, sc)
	} else if err := sc.Wait(setupTimeout, &sr); err != nil {
		return failed(err), false
	}
	fig = thrFigure(rr, sr, t.size, busyPercent(c0, c1))
	if d := dropDelta(procNames(t.procs), drops0, r.drops(t.procs)); d != "" {
		if fig.Failed {
			fig.Status += "; rsbd counters: " + d
		} else {
			fig.Note += "; rsbd counters: " + d
		}
	}
	return fig, ok
}

// drops reads the drop and loss counters of the rsbd processes.
func (r *runner) drops(ps []*agent.Process) []map[string]float64 {
	out := make([]map[string]float64, len(ps))
	for i, p := range ps {
		if err := p.Do("drops", nil, setupTimeout, &out[i]); err != nil {
			r.logf("drops: %v", err)
		}
	}
	return out
}

// dropDelta describes how the counters of the named processes grew
// between two readings.
func dropDelta(names []string, before, after []map[string]float64) string {
	var parts []string
	for i := range after {
		keys := make([]string, 0, len(after[i]))
		for k := range after[i] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !shownCounter(k) {
				continue
			}
			var b float64
			if i < len(before) {
				b = before[i][k]
			}
			if d := after[i][k] - b; d > 0 {
				parts = append(parts, fmt.Sprintf("%s %s +%.0f", names[i], strings.TrimPrefix(k, "rsbd_"), d))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// thrFigure turns a receiver's and sender's results into a figure.
func thrFigure(rr workload.RecvResult, sr workload.SendResult, size int, cpu float64) report.Figure {
	f := report.Figure{Value: rr.Rate, MBps: rr.Rate * float64(size) / 1e6}
	notes := []string{fmt.Sprintf("%d events", rr.N)}
	if sr.Elapsed > 0 {
		notes = append(notes, fmt.Sprintf("published in %.2f s", sr.Elapsed.Seconds()))
	}
	if cpu > 0 {
		notes = append(notes, fmt.Sprintf("host CPU %.0f%%", cpu))
	}
	if rr.Dups > 0 {
		notes = append(notes, fmt.Sprintf("%d duplicates", rr.Dups))
	}
	f.Note = strings.Join(notes, ", ")
	var bad []string
	if rr.TimedOut {
		bad = append(bad, fmt.Sprintf("too slow: %d of %d received within the limit", rr.Received, rr.N))
	} else if rr.Lost > 0 {
		bad = append(bad, fmt.Sprintf("lost %d of %d", rr.Lost, rr.N))
	}
	if rr.WarmLost > 0 {
		bad = append(bad, fmt.Sprintf("lost %d warm-up events", rr.WarmLost))
	}
	if rr.LossReports > 0 {
		bad = append(bad, fmt.Sprintf("the endpoint reported %d lost (datagrams of rsbd's streams, events a Go client listener dropped)", rr.LossReports))
	}
	if rr.Misrouted > 0 {
		bad = append(bad, fmt.Sprintf("misrouted %d (delivered on a topic they were not published on)", rr.Misrouted))
	}
	if len(bad) > 0 {
		f.Failed, f.Status = true, strings.Join(bad, ", ")
	}
	return f
}

func failed(err error) report.Figure {
	return report.Figure{Failed: true, Status: "error: " + err.Error()}
}

// stopSender aborts a sender and reports whether it ended in time.
func (r *runner) stopSender(p *agent.Process, sc *agent.Call) bool {
	_ = p.Do("abort", nil, setupTimeout, nil)
	if err := sc.Wait(setupTimeout, nil); err != nil && strings.Contains(err.Error(), "timed out") {
		r.logf("sender did not stop: %v", err)
		return false
	}
	return true
}

// startProfiles starts CPU profiles of the run's rsbd processes (and with
// profileClients of its client processes, a peer's too) and returns the
// function that stops them.
func (r *runner) startProfiles(t thrRun) func() {
	return r.startRecordings("profile", r.o.profileDir, profiled(t, r.o.profileClients), func(p *agent.Process) string {
		return fmt.Sprintf("%s-%d-%s.pprof", strings.ReplaceAll(t.label, " ", "_"), t.size, p.Name())
	})
}

// profiled lists the processes of a run to profile: its rsbd processes
// (a peer's run has none), and with clients its sender and receiver when
// they are other processes, a peer's client processes among them.
func profiled(t thrRun, clients bool) []*agent.Process {
	ps := slices.Clone(t.procs)
	if !clients {
		return ps
	}
	for _, p := range []*agent.Process{t.send, t.recv} {
		if p != nil && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// latRun is one ping-pong measurement.
type latRun struct {
	// ping runs the pinger; pong, if not nil, the echo (otherwise the
	// pinger's endpoint echoes by itself, as the raw UDP one does).
	ping, pong *agent.Process
	in, out    string // pong topic (the pinger subscribes), ping topic
	size       int
	sys        string // the figure keys' system, naming its traces
	// procs lists the rsbd processes whose counters go into the note (and
	// are traced with --trace-dir).
	procs []*agent.Process
}

// latency runs one ping-pong measurement and returns its percentiles.
func (r *runner) latency(t latRun) latFigs {
	if t.pong != nil {
		if err := t.pong.Do("pong", pongArgs{In: t.out, Out: t.in}, setupTimeout, nil); err != nil {
			return failedLat(err)
		}
		defer func() { _ = t.pong.Do("unpong", pongArgs{In: t.out}, setupTimeout, nil) }()
	}
	var pr workload.PingResult
	pa := workload.PingArgs{In: t.in, Out: t.out, N: r.p.pings, Warm: r.p.pingWarm, Size: t.size, Timeout: time.Second}
	drops0 := r.drops(t.procs)
	stopTraces := r.startRecordings("trace", r.o.traceDir, t.procs, func(p *agent.Process) string {
		return fmt.Sprintf("%s-%d-%s.trace", strings.ReplaceAll(t.sys, "/", "_"), t.size, p.Name())
	})
	err := t.ping.Do("ping", pa, probeTimeout+2*time.Minute, &pr)
	stopTraces()
	if err != nil {
		return failedLat(err)
	}
	l := latFigures(pr)
	if d := dropDelta(procNames(t.procs), drops0, r.drops(t.procs)); d != "" {
		l.p50.Note += "; rsbd counters: " + d
	}
	return l
}

// latFigs are the percentiles of one round-trip run.
type latFigs struct{ p50, p99, p999 report.Figure }

// failedLat marks every percentile of a run failed with err.
func failedLat(err error) latFigs { return latFigs{failed(err), failed(err), failed(err)} }

// set records the percentiles under sys's keys for size.
func (l latFigs) set(r *runner, sys string, size int) {
	r.set(p50Key(sys, size), l.p50)
	r.set(p99Key(sys, size), l.p99)
	if l.p999.Value > 0 || l.p999.Failed {
		r.set(p999Key(sys, size), l.p999)
	}
}

func latFigures(pr workload.PingResult) latFigs {
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	note := fmt.Sprintf("%d round trips", pr.Latency.Count)
	l := latFigs{
		p50:  report.Figure{Value: us(pr.Latency.P50), Note: note},
		p99:  report.Figure{Value: us(pr.Latency.P99), Note: note},
		p999: report.Figure{Value: us(pr.Latency.P999), Note: note},
	}
	if pr.Lost > 0 || pr.WarmLost > 0 {
		st := fmt.Sprintf("%d pings unanswered within 1 s (%d in warm-up)", pr.Lost+pr.WarmLost, pr.WarmLost)
		for _, f := range []*report.Figure{&l.p50, &l.p99, &l.p999} {
			f.Failed, f.Status = true, st
		}
	}
	return l
}

// shownCounter says whether a counter goes into a run's note: drops,
// losses, NACKs, repairs and the DATA datagrams sent (events per datagram
// show the batching); other datagram kinds are left out.
func shownCounter(key string) bool {
	if strings.Contains(key, "datagrams_total{kind=") {
		return strings.HasPrefix(key, "rsbd_sent_datagrams_total{kind=data}")
	}
	return true
}

func procNames(ps []*agent.Process) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name()
	}
	return out
}
