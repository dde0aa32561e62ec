package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/rsbd/rsbd/bench/internal/report"
)

// Peer names in the table.
const (
	peerDDS  = "Cyclone DDS (ddsperf)"
	peerNATS = "NATS 2.15 (nats.go)"
	peerUDP  = "raw Go UDP ping-pong"
	peerMC   = "raw Go UDP multicast ping-pong"
	peerTCP  = "raw Go TCP relay (3 processes)"
	peerUnix = "raw Go Unix socket relay (3 processes)"
)

func ge(b float64) *report.Goal { return &report.Goal{Op: ">=", Bound: b} }
func le(b float64) *report.Goal { return &report.Goal{Op: "<=", Bound: b} }

// table builds the comparison from the recorded figures; rows whose figures
// were never measured (stages left out with --only) are omitted.
func (r *runner) table(start time.Time) *report.Table {
	t := &report.Table{
		Title:    "rsbd side by side with Cyclone DDS and NATS",
		Started:  start,
		Duration: time.Since(start).Round(time.Second).String(),
		Command:  strings.Join(os.Args, " "),
		Host:     hostInfo(),
		Revision: revision(),
		Pinning:  r.pinning(),
		Notes:    append(r.methodNotes(), r.notes...),
	}
	add := func(row report.Row, rsbdKey, peerKey string) {
		rf, rok := r.figs[rsbdKey]
		pf, pok := r.figs[peerKey]
		if !rok && !pok {
			return
		}
		row.RSBD, row.PeerFig = rf, pf
		t.Add(row)
	}
	r.throughputRows(add)
	r.latencyRows(add)
	r.scalingRows(add)
	return t
}

type addFunc func(row report.Row, rsbdKey, peerKey string)

func (r *runner) throughputRows(add addFunc) {
	thr := func(c string, size int, peer string, goal *report.Goal) report.Row {
		return report.Row{Section: "throughput", Case: c, Size: size, Metric: "msgs/s", Unit: report.UnitMsgs, Peer: peer, Goal: goal}
	}
	for _, s := range sizes {
		goal := ge(1.0)
		if s <= 1<<10 {
			goal = ge(1.1)
		}
		add(thr("embedded, peer to peer (2 processes, multicast, reliable)", s, peerDDS, goal), thrKey(sysEmbedded, s), thrKey(sysDDS, s))
	}
	for _, s := range sizes {
		add(thr("one daemon, socket publisher → subscriber", s, peerNATS, ge(1.0)), thrKey(sysDaemon, s), thrKey(sysNATS, s))
	}
	for _, s := range sizes {
		add(thr("one daemon, socket clients on its Unix socket", s, peerNATS, ge(1.0)), thrKey(sysDaemonU, s), thrKey(sysNATS, s))
	}
	for _, s := range sizes {
		add(thr("one daemon, Go client package (Informer → Listener)", s, peerNATS, ge(1.0)), thrKey(sysDaemonC, s), thrKey(sysNATS, s))
	}
	for _, s := range sizes {
		add(thr("two daemons, socket → A → multicast → B → socket", s, peerNATS, nil), thrKey(sysDaemons, s), thrKey(sysNATS, s))
	}
	for _, s := range sizes {
		goal := ge(1.0)
		if s <= 1<<10 {
			goal = ge(1.1)
		}
		add(thr("embedded, peer to peer, windowed", s, peerDDS, goal), winKey(sysEmbedded, s), thrKey(sysDDS, s))
	}
	for _, s := range sizes {
		add(thr("one daemon, windowed (both sides)", s, peerNATS+" windowed", ge(1.0)), winKey(sysDaemon, s), winKey(sysNATS, s))
	}
	for _, s := range sizes {
		add(thr("one daemon, Unix socket, windowed (both sides)", s, peerNATS+" windowed", ge(1.0)), winKey(sysDaemonU, s), winKey(sysNATS, s))
	}
	for _, s := range sizes {
		add(thr("two daemons, windowed (both sides)", s, peerNATS+" windowed", nil), winKey(sysDaemons, s), winKey(sysNATS, s))
	}
}

// latencyRows adds the round trips as every system sleeps when idle, then
// as measured with idle CPUs polling (idlepoll.go) and on a busy host
// (busy.go), when those ran.
func (r *runner) latencyRows(add addFunc) {
	r.latencySection(add, "latency", "")
	r.latencySection(add, "latency, idle CPUs poll", pollSuffix)
	r.latencySection(add, "latency, busy host", busySuffix)
}

// latencySection adds one condition's round-trip rows. The goals: rsbd
// embedded's p50 within 1.2× raw UDP's and its p99 no higher than Cyclone
// DDS's; through one daemon half NATS's p50 and 0.7× its p99; through two
// daemons no higher a p99 than NATS's one server.
func (r *runner) latencySection(add addFunc, section, suffix string) {
	lat := func(c string, size int, metric, peer string, goal *report.Goal) report.Row {
		return report.Row{Section: section, Case: c, Size: size, Metric: metric, Unit: report.UnitMicro, Peer: peer, Goal: goal}
	}
	const emb, d1, d1u, d1c, d2 = "embedded, peer to peer", "one daemon, socket clients", "one daemon, clients on its Unix socket",
		"one daemon, Go client package", "two daemons, socket clients"
	k := func(sys string) string { return sys + suffix }
	for _, s := range latencySizes {
		add(lat(emb, s, "RTT p50", peerUDP, le(1.2)), p50Key(k(sysEmbedded), s), p50Key(k(sysUDP), s))
		add(lat(emb, s, "RTT p99", peerUDP, nil), p99Key(k(sysEmbedded), s), p99Key(k(sysUDP), s))
		add(lat(emb, s, "RTT p99.9", peerUDP, nil), p999Key(k(sysEmbedded), s), p999Key(k(sysUDP), s))
		add(lat(emb, s, "RTT p50", peerMC, nil), p50Key(k(sysEmbedded), s), p50Key(k(sysMcast), s))
		add(lat(emb, s, "RTT p50", peerDDS, nil), p50Key(k(sysEmbedded), s), p50Key(k(sysDDS), s))
		add(lat(emb, s, "RTT p99", peerDDS, le(1.0)), p99Key(k(sysEmbedded), s), p99Key(k(sysDDS), s))
		add(lat(d1, s, "RTT p50", peerNATS, le(0.5)), p50Key(k(sysDaemon), s), p50Key(k(sysNATS), s))
		add(lat(d1, s, "RTT p99", peerNATS, le(0.7)), p99Key(k(sysDaemon), s), p99Key(k(sysNATS), s))
		add(lat(d1, s, "RTT p99.9", peerNATS, nil), p999Key(k(sysDaemon), s), p999Key(k(sysNATS), s))
		add(lat(d1, s, "RTT p50", peerTCP, nil), p50Key(k(sysDaemon), s), r.withPeerNote(p50Key(k(sysRelay), s), p50Key(k(sysNATS), s), "NATS"))
		add(lat(d1, s, "RTT p99", peerTCP, nil), p99Key(k(sysDaemon), s), r.withPeerNote(p99Key(k(sysRelay), s), p99Key(k(sysNATS), s), "NATS"))
		add(lat(d1u, s, "RTT p50", peerNATS, le(0.5)), p50Key(k(sysDaemonU), s), p50Key(k(sysNATS), s))
		add(lat(d1u, s, "RTT p99", peerNATS, le(0.7)), p99Key(k(sysDaemonU), s), p99Key(k(sysNATS), s))
		add(lat(d1u, s, "RTT p50", peerUnix, nil), p50Key(k(sysDaemonU), s), r.withPeerNote(p50Key(k(sysRelayU), s), p50Key(k(sysNATS), s), "NATS"))
		if suffix == pollSuffix { // the Go client and two daemons run no idle-poll series
			continue
		}
		add(lat(d1c, s, "RTT p50", peerNATS, le(0.5)), p50Key(k(sysDaemonC), s), p50Key(k(sysNATS), s))
		add(lat(d1c, s, "RTT p99", peerNATS, le(0.7)), p99Key(k(sysDaemonC), s), p99Key(k(sysNATS), s))
		add(lat(d1c+", inline delivery", s, "RTT p50", peerNATS, le(0.5)), p50Key(k(sysDaemonCI), s), p50Key(k(sysNATS), s))
		add(lat(d1c+", inline delivery", s, "RTT p99", peerNATS, le(0.7)), p99Key(k(sysDaemonCI), s), p99Key(k(sysNATS), s))
		add(lat(d2, s, "RTT p50", peerNATS, nil), p50Key(k(sysDaemons), s), p50Key(k(sysNATS), s))
		add(lat(d2, s, "RTT p99", peerNATS, le(1.0)), p99Key(k(sysDaemons), s), p99Key(k(sysNATS), s))
		add(lat(d2, s, "RTT p99.9", peerNATS, nil), p999Key(k(sysDaemons), s), p999Key(k(sysNATS), s))
	}
}

// openListenerRows adds the listener steps run open loop, against the
// single listener run open loop.
func (r *runner) openListenerRows(add addFunc, step func(c string, k, maxK int) report.Row, maxL int) {
	base := openKey(listenersKey(r.p.listeners[0]))
	if _, ok := r.figs[base]; !ok {
		return
	}
	inner := step
	step = func(c string, k, maxK int) report.Row {
		row := inner(c, k, maxK)
		row.Peer = "rsbd, 1 listener, open loop"
		return row
	}
	for _, k := range r.p.listeners {
		add(step("%d socket listeners, open loop (1 connection + scope each, round-robin)", k, maxL), openKey(listenersKey(k)), base)
	}
	for _, k := range r.p.sharedListeners {
		add(step("%d socket listeners over one connection, open loop (1 scope + Hello participant each, round-robin)", k, maxL), openKey(sharedKey(k)), base)
	}
	if r.p.spreadConns > 1 {
		c := fmt.Sprintf("%%d socket listeners over %d connections, open loop (%d each, 1 scope + Hello participant each, round-robin)",
			r.p.spreadConns, maxL/r.p.spreadConns)
		add(step(c, maxL, maxL), openKey(spreadKey(maxL)), base)
	}
}

func (r *runner) scalingRows(add addFunc) {
	step := func(c string, k, maxK int) report.Row {
		var goal *report.Goal
		if k == maxK && k > 1 {
			goal = ge(0.9)
		}
		return report.Row{Section: "scaling", Case: fmt.Sprintf(c, k), Size: r.p.scaleSize, Metric: "msgs/s",
			Unit: report.UnitMsgs, Peer: "rsbd, 1 scope/listener", Goal: goal}
	}
	for _, k := range r.p.scopes {
		add(step("%d scopes (daemon subscriptions, socket publisher round-robin)", k, r.p.scopes[len(r.p.scopes)-1]),
			scopesKey(k), scopesKey(r.p.scopes[0]))
	}
	maxL := r.p.listeners[len(r.p.listeners)-1]
	base := listenersKey(r.p.listeners[0])
	for _, k := range r.p.listeners {
		add(step("%d socket listeners (1 connection + scope each, round-robin)", k, maxL), listenersKey(k), base)
	}
	for _, k := range r.p.sharedListeners {
		add(step("%d socket listeners over one connection (1 scope + Hello participant each, round-robin)", k, maxL), sharedKey(k), base)
	}
	if r.p.spreadConns > 1 {
		c := fmt.Sprintf("%%d socket listeners over %d connections (%d each, 1 scope + Hello participant each, round-robin)",
			r.p.spreadConns, maxL/r.p.spreadConns)
		add(step(c, maxL, maxL), spreadKey(maxL), base)
	}
	r.openListenerRows(add, step, maxL)
	for _, k := range r.p.natsConns {
		if _, ok := r.figs[listenersKey(k)]; !ok {
			continue
		}
		add(report.Row{Section: "scaling", Case: fmt.Sprintf("%d listeners, 1 connection + scope/subject each (rsbd socket vs NATS, for context)", k),
			Size: r.p.scaleSize, Metric: "msgs/s", Unit: report.UnitMsgs, Peer: fmt.Sprintf("NATS 2.15, %d subscriber connection%s", k, plural(k))},
			listenersKey(k), natsSubsKey(k))
	}
	for _, l := range r.natsMuxLayouts() {
		k, conns := l[0], l[1]
		rsbdKey := sharedKey(k)
		if conns > 1 {
			rsbdKey = spreadKey(k)
		}
		add(report.Row{Section: "scaling",
			Case: fmt.Sprintf("%d listeners over %d connection%s (rsbd socket vs NATS subjects, for context)", k, conns, plural(conns)),
			Size: r.p.scaleSize, Metric: "msgs/s", Unit: report.UnitMsgs,
			Peer: fmt.Sprintf("NATS 2.15, %d subjects over %d subscriber connection%s", k, conns, plural(conns))},
			rsbdKey, natsMuxKey(k, conns))
	}
	if _, ok := r.figs[memSubKey]; !ok {
		return
	}
	r.figs["goal/1KiB"] = report.Figure{Value: 1024}
	add(report.Row{Section: "memory", Case: "idle embedded subscription", Metric: "heap per subscription",
		Unit: report.UnitBytes, Peer: "goal", Goal: le(1.0)}, memSubKey, "goal/1KiB")
	add(report.Row{Section: "memory", Case: "idle socket listener (daemon side)", Metric: "heap per connection",
		Unit: report.UnitBytes, Peer: "goal", Goal: le(1.0)}, memListenerKey, "goal/1KiB")
	add(report.Row{Section: "memory", Case: "idle socket listener participant, one shared connection (daemon side)", Metric: "heap per participant",
		Unit: report.UnitBytes, Peer: "goal", Goal: le(1.0)}, memParticipantKey, "goal/1KiB")
}

func plural(k int) string {
	if k == 1 {
		return ""
	}
	return "s"
}

// methodNotes describes how the figures were made.
func (r *runner) methodNotes() []string {
	var counts []string
	for _, s := range sizes {
		counts = append(counts, fmt.Sprintf("%s: %d (+%d warm-up)", report.FormatSize(s), r.p.count[s], r.p.warm[s]))
	}
	return []string{
		"throughput = the subscriber's rate between its first and last measured arrival; each run probes until the path carries events, then publishes the warm-up burst and the measured events back to back as fast as the publisher's API accepts them; MB = 10^6 payload bytes",
		"events per throughput run (rsbd and NATS alike): " + strings.Join(counts, ", "),
		fmt.Sprintf("round trips: %d measured after %d warm-up, one ping outstanding, RTT over the whole run (nearest rank); rsbd and NATS reply from inside the event handler (the ponger republishes, the pinger sends its next ping), the raw references write the ping and read its echo on one goroutine and echo on the goroutine that read; rsbd nodes run with their default SpinWait (a UDP reader whose delivery was answered polls its socket up to 50 µs before it sleeps), the raw references and the other systems sleep in the poller", r.p.pings, r.p.pingWarm),
		"raw references (Go net package, no protocol work; what the structure of a layout costs on this host): UDP = unicast ping-pong between two processes; UDP multicast = the same over loopback multicast with IP_MULTICAST_LOOP, pings to group A, pongs to group B, each process joined to its own group only (golang.org/x/net/ipv4); TCP relay = pinger and echo processes connected through a relay process that copies every byte read on one loopback TCP connection to the other (one goroutine per direction, TCP_NODELAY), four socket hops per round trip as through one daemon or a NATS server; Unix socket relay = the same over Unix stream sockets; the pinger sends 4-byte length-prefixed messages",
		"one daemon on its Unix socket = the same clients and daemon with the clients dialling the daemon's --socket-path (the RSB socket protocol over a Unix stream socket; NATS has no such transport, so its rows are the TCP ones)",
		fmt.Sprintf("ddsperf runs for a duration, not a count (%v throughput, %v ping-pong): figures are medians of its 1-s windows, first and last dropped (throughput) or first dropped (RTT); reliable, KEEP_ALL, loopback with multicast, defaults otherwise; a throughput run that stalled (the publisher's writes timed out, or data in fewer than half of its windows) runs once more, and a second stall is a peer FAIL", r.p.ddsThr, r.p.ddsLat),
		"NATS: nats-server v2.15.3 (its Go module, run in a child process, max_payload 2 MB), publisher and subscriber nats.go v1.55.0 processes; pub/sub ping-pong for RTT; a connection the server closed (a slow consumer, which fails its run) is replaced before the next run",
		"rsbd socket clients write raw RSB socket frames through package rsbsocket/sockclient, batching publishes (up to 128 frames or 64 KiB per write, flushed at the end and after every ping) in a batch buffer they keep; subscribers announce a listener with an introspection Hello and read every frame into one buffer they reuse (ClientConn.RecvInto; the handlers keep no payload), where nats.go allocates each message",
		"rsbd embedded subscribers subscribe WithoutRetention (the harness's handlers keep no payload, in every system): a node whose subscriptions all do delivers events from its receive buffers without copying them and reuses the buffers of reassembled events",
		"FAIL = a reliable run lost events (or broke); its rate does not count and its ratio is left out; an rsbd FAIL misses its goal, a peer FAIL leaves the goal not judged",
		"windowed = end-to-end flow control outside the system under test: the subscriber reports its arrivals every quarter window over a UDP side channel and the publisher keeps at most a window of min(1000 events, 16 MiB) in flight; ddsperf is always flow-controlled by Cyclone's reliable KEEP_ALL writer",
		fmt.Sprintf("scaling: one daemon, windowed; %d events of %d B spread round-robin over the scopes or listeners; listeners are socket subscriptions on distinct scopes, each announced by its own introspection Hello participant, with one connection each, all on one connection, or spread over a few; NATS subscribers (one connection and subject each, or the largest listener step's subjects over one connection and over as many as the spread rsbd layout) get the same workload; memory = live heap after two collections, read every 300 ms until two readings agree within 1 %%, divided by the count; the rsbd scope steps run in %d interleaved rounds after a first round that is not counted, each listener layout %d times back to back, and a step's figure is its median run (a failed run fails the step); NATS steps run once; each listener layout then runs %d times more open loop (no window: only rsbd's own flow control, the daemon making the publisher wait while a subscriber's queue is full), its rows against the single listener open loop", r.p.scaleCount, r.p.scaleSize, r.p.scopeRounds, r.p.scaleReps, r.p.scaleReps),
		fmt.Sprintf("latency, busy host = every system's round trips again, right after its quiet series, while %d load processes of the bench (one per CPU, nice 0 like every system) each spin for %.0f %% of every %v and sleep for the rest, at random phases; p99.9 is the 99.9th percentile over the whole run (ddsperf prints none: its rows stop at p99)", runtime.NumCPU(), burnDuty*100, burnPeriod),
		"latency, idle CPUs poll = every system's round trips again, right after its first series, while the bench holds a PM QoS request of 0 µs on /dev/cpu_dma_latency (what a host tuned for latency does): idle virtual CPUs poll instead of halting, so no hop waits for a halted CPU to wake; the request is dropped after each series",
		"rsbd counters: deltas of the nodes' drop, NACK, repair, datagram and poll-for-answer (spin) counters over the run",
	}
}

// revision names the git commit of the working tree the benchmark was built
// in, with "+ uncommitted changes" when the tree differs from it in more
// than Markdown files (the figures' own write-up changes while they run).
func revision() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && codeChanged(string(st)) {
		rev += " + uncommitted changes"
	}
	return rev
}

// codeChanged reports whether git's porcelain status lists a changed file
// other than Markdown.
func codeChanged(status string) bool {
	for _, line := range strings.Split(status, "\n") {
		if name := strings.TrimSpace(line); name != "" && !strings.HasSuffix(name, ".md") {
			return true
		}
	}
	return false
}
