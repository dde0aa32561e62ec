package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
)

// The fault suite's injections, applied in a host's namespace with
// nftables (loss, duplication, partitions, steering) and tc (an HTB class
// that delays the datagrams steered into it, which reorders them: this
// kernel has no netem). Gossip (port 7946) is spared by loss, reordering
// and duplication, which test the data plane; partitions cut everything.
const (
	faultTable  = "rsbdfault"
	gossipPort  = "7946"
	metricsPort = "9555"
	// reorderRate is the HTB class the reordered datagrams queue in: at
	// 1 Mbit/s a 1400-byte datagram takes about 11 ms, so it arrives after
	// the datagrams sent behind it.
	reorderRate = "1mbit"
)

// rig is a fault test's network and cluster: one host per name, each
// running a daemon whose metrics are served on its own address (read from
// inside its namespace) and whose reliable QoS is ordered.
type rig struct {
	t   *testing.T
	lab *netLab
	c   *cluster
	ip  map[string]string
	d   map[string]*daemon
}

// newRig builds the hosts and starts their daemons (all but those in
// later, which the test starts with rig.start); it skips without root,
// iproute2 or nftables unless CI=true.
func newRig(t *testing.T, extra []string, hosts ...string) *rig {
	t.Helper()
	needLab(t)
	r := &rig{t: t, lab: newNetLab(t), c: newCluster(t), ip: map[string]string{}, d: map[string]*daemon{}}
	for _, h := range hosts {
		r.ip[h] = r.lab.host(strings.ToLower(h))
	}
	for _, h := range hosts {
		r.start(h, extra)
	}
	return r
}

// start runs host h's daemon, adding the host first if it is new.
func (r *rig) start(h string, extra []string) *daemon {
	r.t.Helper()
	if _, ok := r.ip[h]; !ok {
		r.ip[h] = r.lab.host(strings.ToLower(h))
	}
	args := append([]string{"--metrics-addr", r.ip[h] + ":" + metricsPort}, extra...)
	d := r.c.start(h, opts{netns: r.lab.ns(strings.ToLower(h)), ip: r.ip[h], args: args,
		env: []string{"RSB_QUALITYOFSERVICE_ORDERING=ORDERED"}})
	r.d[h] = d
	return d
}

// nft runs an nft command in host h's namespace.
func (r *rig) nft(h string, cmd string) {
	r.t.Helper()
	r.lab.run(strings.ToLower(h), "nft", cmd)
}

// ensureTable creates the fault table with an input and an output chain.
func (r *rig) ensureTable(h string) {
	r.t.Helper()
	r.nft(h, "add table inet "+faultTable)
	r.nft(h, "add chain inet "+faultTable+" in { type filter hook input priority 0; }")
	r.nft(h, "add chain inet "+faultTable+" out { type filter hook postrouting priority 0; }")
}

// loss drops pct % of the bus datagrams host h receives.
func (r *rig) loss(h string, pct int) {
	r.t.Helper()
	r.ensureTable(h)
	if pct >= 100 {
		r.nft(h, fmt.Sprintf("add rule inet %s in udp dport != %s counter drop", faultTable, gossipPort))
		return
	}
	r.nft(h, fmt.Sprintf("add rule inet %s in udp dport != %s numgen random mod 100 < %d counter drop", faultTable, gossipPort, pct))
}

// partition cuts host h off from every other host, both ways, gossip
// included.
func (r *rig) partition(h string) {
	r.t.Helper()
	r.ensureTable(h)
	for o, ip := range r.ip {
		if o != h {
			r.nft(h, fmt.Sprintf("add rule inet %s in ip saddr %s counter drop", faultTable, ip))
			r.nft(h, fmt.Sprintf("add rule inet %s out ip daddr %s counter drop", faultTable, ip))
		}
	}
}

// heal removes host h's nftables faults.
func (r *rig) heal(h string) {
	r.t.Helper()
	r.nft(h, "delete table inet "+faultTable)
}

// reorder delays pct % of the bus datagrams host h sends behind the
// others: nftables steers them (skb priority 1:20) into a slow HTB class.
func (r *rig) reorder(h string, pct int) {
	r.t.Helper()
	ns := strings.ToLower(h)
	if out, err := exec.Command("ip", "netns", "exec", r.lab.ns(ns), "tc", "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "10").CombinedOutput(); err != nil {
		if onCI() {
			r.t.Fatalf("tc htb: %v: %s", err, out)
		}
		r.t.Skipf("this kernel has no HTB qdisc: %v: %s", err, out)
	}
	r.lab.run(ns, "tc", "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:10", "htb", "rate", "10gbit")
	r.lab.run(ns, "tc", "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:20", "htb", "rate", reorderRate,
		"ceil", reorderRate, "burst", "1500b", "cburst", "1500b")
	r.ensureTable(h)
	r.nft(h, fmt.Sprintf("add rule inet %s out udp dport != %s numgen random mod 100 < %d counter meta priority set 1:20", faultTable, gossipPort, pct))
}

// duplicate sends pct % of the bus datagrams host h sends twice (an
// nftables egress hook on eth0).
func (r *rig) duplicate(h string, pct int) {
	r.t.Helper()
	r.nft(h, "add table netdev "+faultTable)
	r.nft(h, "add chain netdev "+faultTable+" eg { type filter hook egress device eth0 priority 0; }")
	r.nft(h, fmt.Sprintf("add rule netdev %s eg udp dport != %s numgen random mod 100 < %d counter dup to eth0", faultTable, gossipPort, pct))
}

// counted sums the packet counters of host h's fault rules.
func (r *rig) counted(h string) int {
	r.t.Helper()
	out, _ := exec.Command("ip", "netns", "exec", r.lab.ns(strings.ToLower(h)), "nft", "list", "ruleset").CombinedOutput()
	n := 0
	for _, m := range regexp.MustCompile(`counter packets (\d+)`).FindAllSubmatch(out, -1) {
		k, _ := strconv.Atoi(string(m[1]))
		n += k
	}
	return n
}

// faultScope is the reliable, ordered scope the suite publishes on.
const faultScope = "/f/ro/"

// pacer publishes numbered events on faultScope from pub at rate events a
// second until n are sent or stop is closed; it reports how many it sent.
type pacer struct {
	sent chan int
	stop chan struct{}
	n    atomic.Int64 // events sent so far
}

// count returns how many events were sent so far.
func (p *pacer) count() int { return int(p.n.Load()) }

// pace starts publishing events numbered from 0; n < 0 means until
// stopped.
func pace(pub *client, n, rate int) *pacer { return paceFrom(pub, 0, n, rate) }

// paceFrom is pace numbering the events from first on; count and wait
// report the number after the last one sent.
func paceFrom(pub *client, first, n, rate int) *pacer {
	p := &pacer{sent: make(chan int, 1), stop: make(chan struct{})}
	go func() {
		const tick = 10 * time.Millisecond
		per := max(rate/int(time.Second/tick), 1)
		t := time.NewTicker(tick)
		defer t.Stop()
		i := first
		if n >= 0 {
			n += first
		}
		p.n.Store(int64(i))
		for n < 0 || i < n {
			select {
			case <-p.stop:
				p.sent <- i
				return
			case <-t.C:
			}
			var bodies [][]byte
			for k := 0; k < per && (n < 0 || i < n); k++ {
				b, err := notification.Marshal(pub.event(faultScope, schemaText, fmt.Appendf(nil, "%08d", i)))
				if err != nil {
					panic(err)
				}
				bodies, i = append(bodies, b), i+1
			}
			pub.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if err := pub.conn.SendMany(bodies); err != nil {
				p.sent <- i - len(bodies)
				return
			}
			p.n.Store(int64(i))
		}
		p.sent <- i
	}()
	return p
}

// wait returns how many events were sent once the pacer ends, stopping it
// first when stop is set.
func (p *pacer) wait(stop bool) int {
	if stop {
		close(p.stop)
	}
	return <-p.sent
}

// tally is what a subscriber received of the numbered events.
type tally struct {
	sent, delivered, duplicates, reordered, missing int
	firstMissing                                    int // -1: none
	p50, p99, max                                   time.Duration
}

// String is the summary line the suite prints.
func (tl tally) String() string {
	return fmt.Sprintf("sent %d delivered %d duplicates %d reordered %d missing %d latency p50 %v p99 %v max %v",
		tl.sent, tl.delivered, tl.duplicates, tl.reordered, tl.missing,
		tl.p50.Round(10*time.Microsecond), tl.p99.Round(10*time.Microsecond), tl.max.Round(10*time.Microsecond))
}

// count tallies the numbered events sub received of the sent ones.
func count(sub *client, sent int) tally {
	sub.mu.Lock()
	evs, at := slices.Clone(sub.evs), slices.Clone(sub.at)
	sub.mu.Unlock()
	keep := onScope(faultScope, schemaText)
	tl := tally{sent: sent, firstMissing: -1}
	seen := make([]bool, sent)
	prev := -1
	var lat []time.Duration
	for k, ev := range evs {
		if !keep(ev) {
			continue
		}
		i, err := strconv.Atoi(string(ev.Data))
		if err != nil || i < 0 || i >= sent {
			continue // sent after the count was taken
		}
		switch {
		case seen[i]:
			tl.duplicates++
			continue
		case i < prev:
			tl.reordered++
		}
		seen[i], prev = true, i
		tl.delivered++
		lat = append(lat, at[k].Sub(time.UnixMicro(ev.MetaData.CreateTime)))
	}
	for i, s := range seen {
		if !s {
			tl.missing++
			if tl.firstMissing < 0 {
				tl.firstMissing = i
			}
		}
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		tl.p50, tl.p99, tl.max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	}
	return tl
}

// countFrom tallies the events from..sent-1 sub received, ignoring the
// earlier ones.
func countFrom(sub *client, from, sent int) tally {
	tl := count(sub, sent)
	all := count(sub, from) // the earlier ones alone
	tl.sent -= from
	tl.delivered -= all.delivered
	tl.missing -= all.missing
	tl.duplicates -= all.duplicates
	return tl
}

// lastDelivered returns the number of the last event on faultScope sub
// received, or -1.
func lastDelivered(sub *client) int {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	keep := onScope(faultScope, schemaText)
	for k := len(sub.evs) - 1; k >= 0; k-- {
		if keep(sub.evs[k]) {
			if i, err := strconv.Atoi(string(sub.evs[k].Data)); err == nil {
				return i
			}
		}
	}
	return -1
}

// waitAll waits until sub has every one of the sent events.
func waitAll(t *testing.T, sub *client, sent int, timeout time.Duration) {
	t.Helper()
	testutil.WaitFor(t, timeout, fmt.Sprintf("%s receiving %d events", sub.name, sent), func() bool {
		return count(sub, sent).missing == 0
	})
}

// sum adds the series of family name (every label set).
func sum(m map[string]float64, name string) float64 {
	var s float64
	for k, v := range m {
		if k == name || strings.HasPrefix(k, name+"{") {
			s += v
		}
	}
	return s
}

// health is the leak-relevant state of a daemon.
type health struct {
	goroutines, streams, buffered, rssMiB, heapMiB float64
}

// healthOf reads d's /metrics.
func healthOf(d *daemon) health {
	m := d.Metrics()
	return health{goroutines: m["go_goroutines"], streams: sum(m, "rsbd_streams"),
		buffered: sum(m, "rsbd_buffered_bytes"), rssMiB: m["process_resident_memory_bytes"] / (1 << 20),
		heapMiB: m["go_memstats_heap_inuse_bytes"] / (1 << 20)}
}

// String prints a health.
func (h health) String() string {
	return fmt.Sprintf("goroutines %.0f streams %.0f buffered %.0f B rss %.1f MiB heap %.1f MiB",
		h.goroutines, h.streams, h.buffered, h.rssMiB, h.heapMiB)
}

// losses sums the loss reports of d (datagrams given up, every reason).
func losses(d *daemon) float64 { return sum(d.Metrics(), "rsbd_loss_reports_total") }

// faultSummary collects one line per scenario for the suite's summary.
type faultSummary struct {
	lines chan string
}

// add records a scenario's line and logs it.
func (s *faultSummary) add(t *testing.T, format string, args ...any) {
	line := fmt.Sprintf("%-10s ", t.Name()[strings.LastIndexByte(t.Name(), '/')+1:]) + fmt.Sprintf(format, args...)
	t.Log(line)
	s.lines <- line
}

// print writes every recorded line (at the end of the suite).
func (s *faultSummary) print(t *testing.T) {
	close(s.lines)
	var all []string
	for l := range s.lines {
		all = append(all, l)
	}
	slices.Sort(all)
	t.Logf("fault suite summary:\n  %s", strings.Join(all, "\n  "))
}

// onCI reports whether the tests run in CI (CI=true), where a missing
// tool or privilege fails the fault suite instead of skipping it.
func onCI() bool { return os.Getenv("CI") == "true" }

// needLab fails on CI, and skips elsewhere, where the suite's network
// cannot be built: not root, or no ip or nft.
func needLab(t *testing.T) {
	t.Helper()
	why := ""
	switch {
	case os.Geteuid() != 0:
		why = "network namespaces need root"
	case !hasProgram("ip"):
		why = "iproute2 (ip) is not installed"
	case !hasProgram("nft"):
		why = "nftables (nft) is not installed"
	}
	if why == "" {
		return
	}
	if onCI() {
		t.Fatal(why + " (CI=true needs it)")
	}
	t.Skip(why)
}

// hasProgram reports whether name is on PATH.
func hasProgram(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}
