package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
)

// Figures of the fault suite.
const (
	// faultP99 bounds the p99 publish-to-delivery latency of the reliable
	// ordered stream at 10 % loss.
	faultP99 = 100 * time.Millisecond
	// partitionFor and pauseFor are how long a partition and a SIGSTOP
	// last.
	partitionFor = 10 * time.Second
	pauseFor     = 5 * time.Second
	// steadyRate is the publishing rate, events a second, of the
	// scenarios that run while a fault comes and goes.
	steadyRate = 200
	// blackoutFor is how long the data plane to B is cut (gossip spared)
	// in the blackout scenario, well past B's --nack-give-up.
	blackoutFor = 3 * time.Second
	// goroutineSlack is how many goroutines more than before a peer came
	// a daemon may run after the peer is gone (timers and pollers of the
	// runtime come and go).
	goroutineSlack = 4
)

// TestFaults is the fault suite: two or three daemons, each in a network
// namespace of its own, carry a reliable ordered stream from a publisher
// at A to subscribers while the network loses, reorders or duplicates
// datagrams, is partitioned for 10 s, or a daemon is killed or paused.
// Every scenario checks that the subscribers get each event at most once
// and in order, every one of them where the fault lets the protocol
// repair it, and that what is lost is reported; it logs its figures, and
// the suite ends with a summary of them.
//
// The 10 % loss scenario runs first and alone, for its latency figure;
// the others run in parallel.
func TestFaults(t *testing.T) {
	needLab(t)
	s := &faultSummary{lines: make(chan string, 16)}
	t.Cleanup(func() { s.print(t) })
	t.Run("loss10", func(t *testing.T) { testLoss(t, s, 10, 3000, 1000, faultP99) })
	t.Run("loss30", func(t *testing.T) { t.Parallel(); testLoss(t, s, 30, 2000, 500, 0) })
	t.Run("reorder", func(t *testing.T) { t.Parallel(); testReorder(t, s) })
	t.Run("duplicate", func(t *testing.T) { t.Parallel(); testDuplicate(t, s) })
	t.Run("partition", func(t *testing.T) { t.Parallel(); testPartition(t, s) })
	t.Run("kill", func(t *testing.T) { t.Parallel(); testKill(t, s) })
	t.Run("pause", func(t *testing.T) { t.Parallel(); testPause(t, s) })
	t.Run("blackout", func(t *testing.T) { t.Parallel(); testBlackout(t, s) })
}

// pair builds hosts A and B with a publisher at A and a subscriber at B
// on faultScope, events flowing.
func pair(t *testing.T, extra ...string) (*rig, *client, *client) {
	r := newRig(t, extra, "A", "B")
	r.c.waitPeers(20 * time.Second)
	pub, sub := dial(t, r.d["A"], "A/pub"), dial(t, r.d["B"], "B/sub")
	sub.listen("/f/")
	waitRoute(t, 20*time.Second, pub, faultScope, sub)
	return r, pub, sub
}

// exact fails the test unless sub got every one of the events once, in
// order.
func exact(t *testing.T, tl tally) {
	t.Helper()
	if tl.duplicates != 0 || tl.reordered != 0 || tl.missing != 0 || tl.delivered != tl.sent {
		t.Errorf("not every event exactly once in order: %v (first missing %d)", tl, tl.firstMissing)
	}
}

// testLoss: both hosts drop pct % of the bus datagrams they receive (data,
// NACKs, repairs, heartbeats alike); n events at rate arrive all, once, in
// order, with a p99 latency of at most p99Max (0: not checked).
func testLoss(t *testing.T, s *faultSummary, pct, n, rate int, p99Max time.Duration) {
	r, pub, sub := pair(t)
	r.loss("A", pct)
	r.loss("B", pct)
	start := time.Now()
	sent := pace(pub, n, rate).wait(false)
	waitAll(t, sub, sent, 60*time.Second)
	took := time.Since(start)
	tl := count(sub, sent)
	exact(t, tl)
	dropped := r.counted("A") + r.counted("B")
	if dropped == 0 {
		t.Error("the rules dropped nothing")
	}
	if p99Max > 0 && tl.p99 > p99Max {
		t.Errorf("p99 latency %v at %d %% loss, want at most %v", tl.p99, pct, p99Max)
	}
	m := r.d["B"].Metrics()
	s.add(t, "%v; %d datagrams dropped, B sent %.0f NACKs, %.0f losses reported; all in %v", tl, dropped,
		m[`rsbd_sent_datagrams_total{kind="nack"}`], sum(m, "rsbd_loss_reports_total"), took.Round(time.Millisecond))
}

// testReorder: A sends 10 % of its bus datagrams through a slow queue that
// delays them behind later ones; B delivers every event once, in order.
func testReorder(t *testing.T, s *faultSummary) {
	r, pub, sub := pair(t)
	r.reorder("A", 10)
	sent := pace(pub, 3000, 1000).wait(false)
	waitAll(t, sub, sent, 60*time.Second)
	tl := count(sub, sent)
	exact(t, tl)
	steered := r.counted("A")
	if steered == 0 {
		t.Error("no datagram went through the slow queue")
	}
	m := r.d["B"].Metrics()
	s.add(t, "%v; %d datagrams delayed, B sent %.0f NACKs", tl, steered, m[`rsbd_sent_datagrams_total{kind="nack"}`])
}

// testDuplicate: A sends 10 % of its bus datagrams twice; B delivers every
// event once, in order, and counts the copies it dropped.
func testDuplicate(t *testing.T, s *faultSummary) {
	r, pub, sub := pair(t)
	r.duplicate("A", 10)
	sent := pace(pub, 3000, 1000).wait(false)
	waitAll(t, sub, sent, 60*time.Second)
	tl := count(sub, sent)
	exact(t, tl)
	dups := r.d["B"].Metric(`rsbd_drops_total{reason="duplicate"}`)
	if r.counted("A") == 0 || dups == 0 {
		t.Errorf("%d datagrams doubled, %v copies dropped at B: want both above 0", r.counted("A"), dups)
	}
	s.add(t, "%v; %d datagrams doubled, %.0f copies dropped at B", tl, r.counted("A"), dups)
}

// testPartition: A is cut off from B, gossip included, for 10 s while it
// publishes, then the cut heals. B gets nothing twice or out of order; the
// events published once the cluster is whole again all arrive; what B
// misses of the others it reports as lost, or its daemon had declared A
// gone (then the events A published meanwhile had no subscriber).
func testPartition(t *testing.T, s *faultSummary) {
	r, pub, sub := pair(t)
	p := pace(pub, -1, steadyRate)
	testutil.WaitFor(t, 10*time.Second, "events before the cut", func() bool { return count(sub, 1).missing == 0 })
	r.partition("A")
	cut := time.Now()
	<-time.After(partitionFor) // the fault's duration
	r.heal("A")
	healed := time.Now()
	whole := r.c.waitPeers(60 * time.Second)
	after := p.count()
	testutil.WaitFor(t, 30*time.Second, "events after the heal", func() bool {
		return lastDelivered(sub) >= after+steadyRate/2
	})
	sent := p.wait(true)
	testutil.WaitFor(t, 30*time.Second, "the last event", func() bool { return lastDelivered(sub) == sent-1 })
	tl := count(sub, sent)
	if tl.duplicates != 0 || tl.reordered != 0 {
		t.Errorf("duplicates or reordering across a partition: %v", tl)
	}
	tail := countFrom(sub, after, sent)
	if tail.missing != 0 {
		t.Errorf("events published after the cluster was whole again missing: %v", tail)
	}
	lost := losses(r.d["B"])
	gone := r.d["B"].Logged(`"msg":"peer gone"`, `"name":"A"`)
	if tl.missing > 0 && lost == 0 && !gone {
		t.Errorf("%d events missing, no loss reported and A never declared gone", tl.missing)
	}
	s.add(t, "%v; cut %v, cluster whole %v after the heal, %d events not delivered (B reported %.0f losses, declared A gone: %v)",
		tl, healed.Sub(cut).Round(time.Millisecond), whole.Round(time.Millisecond), tl.missing, lost, gone)
}

// testKill: C joins a cluster of A and B, subscribes, and is killed with
// SIGKILL while A publishes. A and B notice (the detection time is
// logged), free C's streams and goroutines, and B gets every event once,
// in order; C restarted rejoins and its new subscriber gets events again.
func testKill(t *testing.T, s *faultSummary) {
	r, pub, subB := pair(t)
	warm := pace(pub, steadyRate, steadyRate).wait(false)
	waitAll(t, subB, warm, 30*time.Second)
	before := map[string]health{"A": healthOf(r.d["A"]), "B": healthOf(r.d["B"])}

	c := r.start("C", nil)
	r.c.waitPeers(30 * time.Second)
	subC := dial(t, c, "C/sub")
	subC.listen("/f/")
	prober := dial(t, r.d["A"], "A/prober")
	waitRoute(t, 20*time.Second, prober, faultScope, subC)
	prober.close() // its connection's goroutines at A are not C's to free
	p := paceFrom(pub, warm, -1, steadyRate)
	mark := p.count()
	testutil.WaitFor(t, 10*time.Second, "C receiving the stream", func() bool { return lastDelivered(subC) > mark })

	c.Kill()
	detect := testutil.WaitFor(t, 30*time.Second, "A and B noticing C's death", func() bool {
		return r.d["A"].Metric("rsbd_peers") == 1 && r.d["B"].Metric("rsbd_peers") == 1
	})
	var after map[string]health
	freed := testutil.WaitForMsg(t, 60*time.Second, func() string {
		return fmt.Sprintf("A and B freeing C's state: before %v, now %v", before, after)
	}, func() bool {
		after = map[string]health{"A": healthOf(r.d["A"]), "B": healthOf(r.d["B"])}
		for h, b := range before {
			if after[h].streams > b.streams || after[h].goroutines > b.goroutines+goroutineSlack {
				return false
			}
		}
		return true
	})

	start := time.Now()
	c.restart()
	rejoin := r.c.waitPeers(30 * time.Second)
	subC2 := dial(t, c, "C/sub again")
	subC2.listen("/f/")
	// The stream is C's from the first event after A routes to it again.
	prober = dial(t, r.d["A"], "A/prober again")
	waitRoute(t, 30*time.Second, prober, faultScope, subC2)
	prober.close()
	mark = p.count()
	testutil.WaitFor(t, 20*time.Second, "C's new subscriber receiving the stream", func() bool { return lastDelivered(subC2) > mark })
	back := time.Since(start)
	sent := p.wait(true)
	waitAll(t, subB, sent, 30*time.Second)
	tl := count(subB, sent)
	exact(t, tl)
	if tc := countFrom(subC2, mark+1, sent); tc.duplicates != 0 || tc.reordered != 0 || tc.missing != 0 {
		t.Errorf("C's new subscriber: %v", tc)
	}
	s.add(t, "B: %v; C's death detected in %v, its state freed %v later (A: %v -> %v; B: %v -> %v); restarted C served again in %v (cluster whole after %v)",
		tl, detect.Round(time.Millisecond), freed.Round(time.Millisecond), before["A"], after["A"], before["B"], after["B"],
		back.Round(time.Millisecond), rejoin.Round(time.Millisecond))
}

// testPause: C is stopped (SIGSTOP) for 5 s while A publishes. B gets
// every event once, in order; C, continued, delivers what it can repair
// and reports the rest as lost, never an event twice or out of order.
func testPause(t *testing.T, s *faultSummary) {
	r := newRig(t, nil, "A", "B", "C")
	r.c.waitPeers(20 * time.Second)
	pub := dial(t, r.d["A"], "A/pub")
	subB, subC := dial(t, r.d["B"], "B/sub"), dial(t, r.d["C"], "C/sub")
	subB.listen("/f/")
	subC.listen("/f/")
	waitRoute(t, 20*time.Second, pub, faultScope, subB, subC)
	p := pace(pub, -1, steadyRate)
	testutil.WaitFor(t, 10*time.Second, "C receiving the stream", func() bool { return lastDelivered(subC) > steadyRate/2 })
	c := r.d["C"]
	c.Signal(syscall.SIGSTOP)
	<-time.After(pauseFor) // the fault's duration
	c.Signal(syscall.SIGCONT)
	resumed := time.Now()
	r.c.waitPeers(30 * time.Second)
	mark := p.count()
	testutil.WaitFor(t, 30*time.Second, "C delivering again", func() bool { return lastDelivered(subC) > mark })
	caughtUp := time.Since(resumed)
	sent := p.wait(true)
	waitAll(t, subB, sent, 30*time.Second)
	tlB := count(subB, sent)
	exact(t, tlB)
	testutil.WaitFor(t, 30*time.Second, "C's last event", func() bool { return lastDelivered(subC) == sent-1 })
	tlC := count(subC, sent)
	if tlC.duplicates != 0 || tlC.reordered != 0 {
		t.Errorf("C: duplicates or reordering after a pause: %v", tlC)
	}
	lost := losses(c)
	gone := r.d["A"].Logged(`"msg":"peer gone"`, `"name":"C"`)
	if tlC.missing > 0 && lost == 0 && !gone {
		t.Errorf("C: %d events missing, no loss reported and C never declared gone", tlC.missing)
	}
	s.add(t, "B: %v; C: %v; C delivering again %v after SIGCONT, %.0f losses reported, declared gone by A: %v",
		tlB, tlC, caughtUp.Round(time.Millisecond), lost, gone)
}

// testBlackout: for 3 s B loses 30 % of the bus datagrams it receives and
// none of its own reach A (gossip passes both ways, so A stays a member),
// while its daemon gives a lost datagram up after 200 ms and 2 NACKs: its
// NACKs go unanswered. The loss is unrecoverable: B reports and counts it, its
// subscriber gets the events before and after the gap once each and in
// order, and the stream goes on.
func testBlackout(t *testing.T, s *faultSummary) {
	r := newRig(t, nil, "A")
	r.start("B", []string{"--nack-give-up", "200ms", "--nack-tries", "2"})
	r.c.waitPeers(20 * time.Second)
	pub, sub := dial(t, r.d["A"], "A/pub"), dial(t, r.d["B"], "B/sub")
	sub.listen("/f/")
	waitRoute(t, 20*time.Second, pub, faultScope, sub)
	p := pace(pub, -1, steadyRate)
	testutil.WaitFor(t, 10*time.Second, "events before the blackout", func() bool { return lastDelivered(sub) > steadyRate/2 })
	r.loss("B", 30)
	r.nft("B", fmt.Sprintf("add rule inet %s out udp dport != %s counter drop", faultTable, gossipPort)) // its NACKs
	<-time.After(blackoutFor)                                                                            // the fault's duration
	r.heal("B")
	mark := p.count()
	testutil.WaitFor(t, 30*time.Second, "events after the blackout", func() bool { return lastDelivered(sub) > mark })
	sent := p.wait(true)
	testutil.WaitFor(t, 30*time.Second, "the last event", func() bool { return lastDelivered(sub) == sent-1 })
	tl := count(sub, sent)
	if tl.duplicates != 0 || tl.reordered != 0 {
		t.Errorf("duplicates or reordering around a blackout: %v", tl)
	}
	if tail := countFrom(sub, mark, sent); tail.missing != 0 {
		t.Errorf("events published after the blackout missing: %v", tail)
	}
	m := r.d["B"].Metrics()
	reports, lost := sum(m, "rsbd_loss_reports_total"), sum(m, "rsbd_lost_datagrams_total")
	if tl.missing == 0 || reports == 0 || !r.d["B"].Logged(`"msg":"events lost"`) {
		t.Errorf("%d events missing, %v loss reports: want an unrecoverable loss, reported and logged", tl.missing, reports)
	}
	s.add(t, "%v; %d events lost in a %v blackout, B reported %.0f losses covering %.0f datagrams", tl, tl.missing, blackoutFor, reports, lost)
}
