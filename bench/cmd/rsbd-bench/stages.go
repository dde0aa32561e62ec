package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/rsbd/rsbd/bench/internal/agent"
	"github.com/rsbd/rsbd/bench/internal/bus"
	"github.com/rsbd/rsbd/bench/internal/ddsperf"
	"github.com/rsbd/rsbd/bench/internal/report"
)

// Keys of the systems in the figure map.
const (
	sysEmbedded = "emb"
	sysDaemon   = "d1"
	sysDaemonU  = "d1u"  // one daemon, clients on its Unix socket
	sysDaemonC  = "d1c"  // one daemon, clients of rsbd's Go client package
	sysDaemonCI = "d1ci" // the same, listeners WithInlineDelivery (round trips)
	sysDaemons  = "d2"
	sysNATS     = "nats"
	sysDDS      = "dds"
	sysUDP      = "udp"
	sysMcast    = "mcast"
	sysRelay    = "tcprelay"
	sysRelayU   = "unixrelay"
)

var stageNames = []string{"embedded", "daemon", "daemonu", "daemonc", "daemon2", "nats", "dds", "udp", "scaling", busyStage}

type stage struct {
	name string
	fn   func() error
}

func (r *runner) stages() []stage {
	return []stage{
		// Each system runs right after the one it is compared with, so
		// that the drift of a shared machine spoils as few ratios as can be.
		{"embedded", r.stageEmbedded},
		{"udp", r.stageUDP},
		{"dds", r.stageDDS},
		{"daemon", r.stageDaemon},
		{"nats", r.stageNATS},
		{"daemonc", r.stageDaemonGoClient},
		{"daemonu", r.stageDaemonUnix},
		{"daemon2", r.stageDaemons},
		{"scaling", r.stageScaling},
	}
}

func thrKey(sys string, size int) string { return fmt.Sprintf("%s/thr/%d", sys, size) }
func winKey(sys string, size int) string { return fmt.Sprintf("%s/win/%d", sys, size) }
func p50Key(sys string, size int) string { return fmt.Sprintf("%s/p50/%d", sys, size) }
func p99Key(sys string, size int) string { return fmt.Sprintf("%s/p99/%d", sys, size) }
func p999Key(sys string, size int) string {
	return fmt.Sprintf("%s/p999/%d", sys, size)
}

// allKeys lists every figure key of a system, to mark them failed when
// its stage cannot start.
func allKeys(sys string, withThr bool) []string {
	var ks []string
	if withThr {
		for _, s := range sizes {
			ks = append(ks, thrKey(sys, s), winKey(sys, s))
		}
	}
	for _, s := range latencySizes {
		ks = append(ks, p50Key(sys, s), p99Key(sys, s), p999Key(sys, s))
	}
	return ks
}

// startNode starts an rsbd node in agent p.
func startNode(p *agent.Process, c bus.NodeConfig) (addrResult, error) {
	var res addrResult
	err := p.Do("node", c, setupTimeout, &res)
	return res, err
}

// waitMembers polls until every node sees want remote members.
func waitMembers(want int, ps ...*agent.Process) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		all := true
		for _, p := range ps {
			var n int
			if err := p.Do("members", nil, setupTimeout, &n); err != nil {
				return err
			}
			all = all && n == want
		}
		if all {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("cluster did not form within 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// seriesPlan says what a series measures besides its open-loop throughput
// at every size and its round trips.
type seriesPlan struct {
	windowed []int // the sizes also measured flow-controlled
	polled   bool  // the round trips again with idle CPUs polling
}

// series runs the throughput measurements of one system, open loop and
// flow-controlled, then its ping-pong: send/recv carry the throughput
// flow, ping/pong the round trips.
func (r *runner) series(sys, label string, send, recv *agent.Process, procs []*agent.Process) {
	r.seriesWith(sys, label, send, recv, procs, seriesPlan{windowed: sizes, polled: true})
}

// seriesWith is series measuring what plan says.
func (r *runner) seriesWith(sys, label string, send, recv *agent.Process, procs []*agent.Process, plan seriesPlan) {
	for _, windowed := range []bool{false, true} {
		if r.latOnly {
			break
		}
		runSizes := sizes
		if windowed {
			runSizes = plan.windowed
		}
		for i, size := range runSizes {
			t := thrRun{
				label: label, send: send, recv: recv, procs: procs,
				topics: []string{fmt.Sprintf("/bench/%s/thr/%d/%v/", sys, size, windowed)},
				size:   size, n: r.p.count[size], warm: r.p.warm[size],
			}
			key, what := thrKey(sys, size), label
			if windowed {
				t.window, key, what = windowFor(size), winKey(sys, size), label+" windowed"
				t.label = what
			}
			fig, ok := r.throughput(t)
			r.set(key, fig)
			r.logThr(what, size, fig)
			if !ok {
				err := errors.New("skipped: an earlier run left the sender stuck")
				for _, s := range runSizes[i+1:] {
					r.fail(err, thrKey(sys, s), winKey(sys, s))
				}
				r.fail(err, allKeys(sys, true)...)
				return
			}
		}
	}
	r.latSeries(sys, label, send, recv, procs)
	if plan.polled {
		r.polled(sys, func(ps string) { r.latSeries(ps, label+" (idle CPUs poll)", send, recv, procs) })
	}
	r.busy(sys, func(bs string) { r.latSeries(bs, label+" (busy host)", send, recv, procs) })
}

func (r *runner) latSeries(sys, label string, ping, pong *agent.Process, procs []*agent.Process) {
	for _, size := range latencySizes {
		l := r.latency(latRun{
			ping: ping, pong: pong, size: size, procs: procs, sys: sys,
			in:  fmt.Sprintf("/bench/%s/pong/%d/", sys, size),
			out: fmt.Sprintf("/bench/%s/ping/%d/", sys, size),
		})
		l.set(r, sys, size)
		r.logLat(label, size, l)
	}
}

func (r *runner) logLat(label string, size int, l latFigs) {
	r.logf("%s RTT %s: p50 %.1f µs, p99 %.1f µs, p99.9 %.1f µs %s", label, report.FormatSize(size),
		l.p50.Value, l.p99.Value, l.p999.Value, l.p50.Status)
}

func (r *runner) logThr(label string, size int, f report.Figure) {
	r.logf("%s throughput %s: %s msg/s, %.1f MB/s %s %s", label, report.FormatSize(size),
		report.FormatCount(f.Value), f.MBps, f.Status, f.Note)
}

// stageEmbedded: two processes with an embedded node each, joined, over
// loopback multicast.
func (r *runner) stageEmbedded() error {
	pool := r.nodeConfig()
	a, err := r.spawn("emb-a", rolePub)
	if err != nil {
		return err
	}
	b, err := r.spawn("emb-b", roleSub)
	if err != nil {
		r.closeAll(a)
		return err
	}
	defer r.closeAll(a, b)
	err = func() error {
		ra, err := startNode(a, pool)
		if err != nil {
			return err
		}
		pb := pool
		pb.Join = []string{ra.Addr}
		if _, err := startNode(b, pb); err != nil {
			return err
		}
		return waitMembers(1, a, b)
	}()
	if err != nil {
		r.fail(err, allKeys(sysEmbedded, true)...)
		return err
	}
	r.series(sysEmbedded, "rsbd embedded", a, b, []*agent.Process{a, b})
	return nil
}

// socketClients spawns a publisher and a subscriber socket client, writing
// raw frames.
func (r *runner) socketClients(prefix, pubAddr, subAddr string) (*agent.Process, *agent.Process, error) {
	return r.clients(prefix, "socket", pubAddr, subAddr)
}

// clients spawns a publisher and a subscriber client of the daemons, their
// endpoints dialled by the agent operation op.
func (r *runner) clients(prefix, op, pubAddr, subAddr string) (*agent.Process, *agent.Process, error) {
	p, err := r.spawn(prefix+"-pub", rolePub)
	if err != nil {
		return nil, nil, err
	}
	s, err := r.spawn(prefix+"-sub", roleSub)
	if err != nil {
		return p, nil, err
	}
	if err := p.Do(op, addrArgs{Addr: pubAddr}, setupTimeout, nil); err != nil {
		return p, s, err
	}
	return p, s, s.Do(op, addrArgs{Addr: subAddr}, setupTimeout, nil)
}

// stageDaemon: publisher and subscriber processes as socket clients of one
// daemon process, then the raw TCP relay in the same layout.
func (r *runner) stageDaemon() error {
	if err := r.oneDaemon(sysDaemon, "rsbd one daemon", "socket", false); err != nil {
		return err
	}
	return r.refRelay(sysRelay, false)
}

// stageDaemonUnix: stageDaemon with the clients on the daemon's Unix
// socket, then the raw relay over Unix sockets.
func (r *runner) stageDaemonUnix() error {
	if err := r.oneDaemon(sysDaemonU, "rsbd one daemon (Unix socket)", "socket", true); err != nil {
		return err
	}
	return r.refRelay(sysRelayU, true)
}

// stageDaemonGoClient: stageDaemon (TCP) with publisher and subscriber
// written with rsbd's Go client package (package client: an Informer and a
// Listener) instead of raw frames, the counterpart of nats.go. After its
// series the round trips run again with listeners WithInlineDelivery.
func (r *runner) stageDaemonGoClient() error {
	// Open loop only and without the series with idle CPUs polling, so
	// the whole run stays within ten minutes.
	plan := seriesPlan{}
	return r.oneDaemonThen(sysDaemonC, "rsbd one daemon (Go client)", "goclient", false, plan, func(p, s *agent.Process, procs []*agent.Process) {
		const label = "rsbd one daemon (Go client, inline delivery)"
		for _, a := range []*agent.Process{p, s} {
			if err := a.Do("goclient-inline", nil, setupTimeout, nil); err != nil {
				r.fail(err, allKeys(sysDaemonCI, false)...)
				return
			}
		}
		r.latSeries(sysDaemonCI, label, p, s, procs)
		r.busy(sysDaemonCI, func(bs string) { r.latSeries(bs, label+" (busy host)", p, s, procs) })
	})
}

// oneDaemon measures publisher and subscriber clients of one daemon
// process (endpoints of the agent operation op), connected over TCP or its
// Unix socket.
func (r *runner) oneDaemon(sys, label, op string, unix bool) error {
	return r.oneDaemonThen(sys, label, op, unix, seriesPlan{windowed: sizes, polled: true}, nil)
}

// oneDaemonThen is oneDaemon measuring what plan says and calling then, if
// set, after the series, with the clients and every process of the layout.
func (r *runner) oneDaemonThen(sys, label, op string, unix bool, plan seriesPlan, then func(p, s *agent.Process, procs []*agent.Process)) error {
	d, err := r.spawn(sys+"-daemon", roleServer)
	if err != nil {
		return err
	}
	var p, s *agent.Process
	defer func() { r.closeAll(p, s, d) }()
	err = func() error {
		c := r.nodeConfig()
		c.Socket = true
		if unix {
			c.SocketPath = filepath.Join(os.TempDir(), fmt.Sprintf("rsbd-bench-%d-%d.sock", os.Getpid(), rand.Uint32()))
		}
		rd, err := startNode(d, c)
		if err != nil {
			return err
		}
		addr := rd.Socket
		if unix {
			addr = rd.Unix
		}
		p, s, err = r.clients(sys, op, addr, addr)
		return err
	}()
	if err != nil {
		r.fail(err, allKeys(sys, true)...)
		return err
	}
	procs := []*agent.Process{d, p, s}
	r.seriesWith(sys, label, p, s, procs, plan)
	if then != nil {
		then(p, s, procs)
	}
	return nil
}

// stageDaemons: publisher → daemon A → multicast → daemon B → subscriber.
func (r *runner) stageDaemons() error {
	da, err := r.spawn("daemon-a", roleServer)
	if err != nil {
		return err
	}
	var db, p, s *agent.Process
	defer func() { r.closeAll(p, s, da, db) }()
	err = func() error {
		if db, err = r.spawn("daemon-b", roleServer); err != nil {
			return err
		}
		c := r.nodeConfig()
		c.Socket = true
		ra, err := startNode(da, c)
		if err != nil {
			return err
		}
		c.Join = []string{ra.Addr}
		rb, err := startNode(db, c)
		if err != nil {
			return err
		}
		if err := waitMembers(1, da, db); err != nil {
			return err
		}
		p, s, err = r.socketClients("d2", ra.Socket, rb.Socket)
		return err
	}()
	if err != nil {
		r.fail(err, allKeys(sysDaemons, true)...)
		return err
	}
	// No series with idle CPUs polling here (its rows have no goal), so
	// the whole run stays within ten minutes.
	r.seriesWith(sysDaemons, "rsbd two daemons", p, s, []*agent.Process{da, db}, seriesPlan{windowed: sizes})
	return nil
}

// stageNATS: nats.go publisher and subscriber processes through a NATS
// server process.
func (r *runner) stageNATS() error {
	srv, err := r.spawn("nats-server", roleServer)
	if err != nil {
		return err
	}
	var p, s *agent.Process
	defer func() { r.closeAll(p, s, srv) }()
	err = func() error {
		var res addrResult
		if err := srv.Do("nats-server", nil, setupTimeout, &res); err != nil {
			return err
		}
		if p, err = r.spawn("nats-pub", rolePub); err != nil {
			return err
		}
		if s, err = r.spawn("nats-sub", roleSub); err != nil {
			return err
		}
		if err := p.Do("nats", addrArgs{Addr: res.Addr}, setupTimeout, nil); err != nil {
			return err
		}
		return s.Do("nats", addrArgs{Addr: res.Addr}, setupTimeout, nil)
	}()
	if err != nil {
		r.fail(err, allKeys(sysNATS, true)...)
		return err
	}
	r.series(sysNATS, "NATS", p, s, nil)
	return nil
}

// stageUDP: raw Go UDP ping-pong between two processes, unicast and then
// over loopback multicast.
func (r *runner) stageUDP() error {
	e, err := r.spawn("udp-echo", roleSub)
	if err != nil {
		return err
	}
	var c *agent.Process
	defer func() { r.closeAll(c, e) }()
	err = func() error {
		var res addrResult
		if err := e.Do("udp-echo", nil, setupTimeout, &res); err != nil {
			return err
		}
		if c, err = r.spawn("udp-ping", rolePub); err != nil {
			return err
		}
		return c.Do("udp", addrArgs{Addr: res.Addr}, setupTimeout, nil)
	}()
	if err != nil {
		r.fail(err, allKeys(sysUDP, false)...)
		return err
	}
	r.refLatency(sysUDP, "raw UDP", c)
	r.polled(sysUDP, func(ps string) { r.refLatency(ps, "raw UDP (idle CPUs poll)", c) })
	r.busy(sysUDP, func(bs string) { r.refLatency(bs, "raw UDP (busy host)", c) })
	return r.refMcast()
}

// stageDDS: ddsperf sub/pub and ping/pong processes.
func (r *runner) stageDDS() error {
	if err := ddsperf.Available(); err != nil {
		r.fail(err, allKeys(sysDDS, true)...)
		return err
	}
	dr := &ddsperf.Runner{PinPub: r.pinFor(rolePub), PinSub: r.pinFor(roleSub), Log: r.agentW.named("ddsperf")}
	ctx := context.Background()
	for _, size := range sizes {
		if r.latOnly {
			break
		}
		c0 := readCPU()
		th, err := dr.Throughput(ctx, size, r.p.ddsThr)
		again := ""
		if errors.Is(err, ddsperf.ErrStalled) {
			// Run a stalled run once more; a second stall is a peer FAIL.
			r.logf("Cyclone DDS throughput %s: %v; running it again", report.FormatSize(size), err)
			again = fmt.Sprintf("; second attempt (the first: %v)", err)
			c0 = readCPU()
			th, err = dr.Throughput(ctx, size, r.p.ddsThr)
		}
		cpu := busyPercent(c0, readCPU())
		f := report.Figure{Value: th.Rate, MBps: th.Rate * float64(size) / 1e6,
			Note: fmt.Sprintf("median of %d 1-s windows, %d samples, host CPU %.0f%% (whole run)%s", th.Windows, th.Total, cpu, again)}
		switch {
		case err != nil:
			f = failed(err)
		case th.Lost > 0:
			f.Failed, f.Status = true, fmt.Sprintf("lost %d samples", th.Lost)
		}
		r.set(thrKey(sysDDS, size), f)
		r.logThr("Cyclone DDS", size, f)
	}
	r.ddsLatency(dr, sysDDS, "")
	r.polled(sysDDS, func(ps string) { r.ddsLatency(dr, ps, " (idle CPUs poll)") })
	r.busy(sysDDS, func(bs string) { r.ddsLatency(dr, bs, " (busy host)") })
	return nil
}

// ddsLatency runs ddsperf's ping-pong at every latency size, keyed by sys.
func (r *runner) ddsLatency(dr *ddsperf.Runner, sys, what string) {
	ctx := context.Background()
	for _, size := range latencySizes {
		l, err := dr.Latency(ctx, size, r.p.ddsLat)
		note := fmt.Sprintf("median of %d 1-s windows, %d round trips", l.Windows, l.Count)
		p50, p99 := report.Figure{Value: l.P50, Note: note}, report.Figure{Value: l.P99, Note: note}
		if err != nil {
			p50, p99 = failed(err), failed(err)
		}
		r.set(p50Key(sys, size), p50)
		r.set(p99Key(sys, size), p99)
		r.logf("Cyclone DDS%s RTT %s: p50 %.1f µs, p99 %.1f µs", what, report.FormatSize(size), p50.Value, p99.Value)
	}
}
