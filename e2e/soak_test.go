package e2e

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
)

// Settings of the soak.
const (
	// soakEnv holds the soak's duration ("30m", "60s"); without it
	// TestSoak is skipped. make soak sets it from SOAK_TIME; .ci/run sets
	// a short one.
	soakEnv = "RSBD_SOAK_TIME"
	// soakRate is each publisher's rate, events a second.
	soakRate = 200
	// soakLoss is the share of bus datagrams every host drops, in percent.
	soakLoss = 5
	// soakEvery is how often the soak reads the daemons' metrics.
	soakEvery = 5 * time.Second
	// soakRecent is how many of the last readings the end RSS is the
	// mean of, so that one reading's noise does not decide.
	soakRecent = 3
	// soakRSSGrowth bounds a daemon's RSS growth after warm-up, unless the
	// growth is within soakRSSNoise: a daemon of some 20 MiB swings by a
	// few MiB between garbage collections, which is not a leak.
	soakRSSGrowth = 0.10
	soakRSSNoise  = 4.0 // MiB
	// soakWarmUpMin and soakWarmUpMax bound the warm-up, a quarter of
	// the run otherwise: the heap and the runtime's memory reach their
	// steady size in it.
	soakWarmUpMin = 20 * time.Second
	soakWarmUpMax = 5 * time.Minute
)

// soakHosts are the soak's hosts; each runs a publisher and a subscriber.
var soakHosts = []string{"A", "B", "C"}

// TestSoak runs three daemons in network namespaces whose kernels drop
// 5 % of the bus datagrams, for RSBD_SOAK_TIME, with a publisher per host
// (a reliable ordered stream of soakRate events a second) and a
// subscriber per host receiving all three streams. It samples every
// daemon's RSS, goroutines and heap, prints them with the delivered and
// lost counts at the start (after warm-up) and at the end, and fails if a
// daemon's RSS grew more than 10 % (and 4 MiB) after warm-up or a subscriber missed,
// doubled or reordered a reliable event.
func TestSoak(t *testing.T) {
	v := os.Getenv(soakEnv)
	if v == "" {
		t.Skipf("%s is not set (make soak sets it)", soakEnv)
	}
	total, err := time.ParseDuration(v)
	if err != nil || total < 2*soakWarmUpMin {
		t.Fatalf("%s=%q: want a duration of at least 20s", soakEnv, v)
	}
	needLab(t)
	warm := min(max(total/4, soakWarmUpMin), soakWarmUpMax)
	r := newRig(t, []string{"--gc-floor", "off"}, soakHosts...)
	r.c.waitPeers(30 * time.Second)
	subs := map[string]*soakSub{}
	for _, h := range soakHosts {
		subs[h] = newSoakSub(t, r.d[h], h+"/sub")
	}
	pubs := map[string]*client{}
	for _, h := range soakHosts {
		pubs[h] = dial(t, r.d[h], h+"/pub")
		var ls []*client
		for _, s := range subs {
			ls = append(ls, s.c)
		}
		waitRoute(t, 30*time.Second, pubs[h], "/soak/"+strings.ToLower(h)+"/", ls...)
	}
	for _, h := range soakHosts {
		r.loss(h, soakLoss)
	}
	t.Logf("soak: %v at %d %% loss, %d events/s from each of %d publishers, warm-up %v", total, soakLoss, soakRate, len(soakHosts), warm)

	pacers := map[string]*soakPacer{}
	for _, h := range soakHosts {
		pacers[h] = startSoakPacer(pubs[h], "/soak/"+strings.ToLower(h)+"/", h)
	}
	start := time.Now()
	var first, last map[string]soakSample
	var recent []map[string]soakSample // the last soakRecent readings
	peakWarm := map[string]float64{}
	tick := time.NewTicker(soakEvery)
	defer tick.Stop()
	nextLog := start.Add(time.Minute)
	for time.Since(start) < total {
		<-tick.C
		now := sampleSoak(r, subs)
		if time.Since(start) < warm {
			for h, s := range now {
				peakWarm[h] = max(peakWarm[h], s.h.rssMiB)
			}
			continue
		}
		if first == nil {
			first = now
			printSoak(t, "start", time.Since(start), first)
		}
		last = now
		recent = append(recent, now)
		if len(recent) > soakRecent {
			recent = recent[1:]
		}
		if time.Now().After(nextLog) {
			printSoak(t, "now", time.Since(start), now)
			for !nextLog.After(time.Now()) {
				nextLog = nextLog.Add(time.Minute)
			}
		}
	}
	sent := map[string]int{}
	for h, p := range pacers {
		sent[h] = p.stop()
	}
	for h, s := range subs {
		testutil.WaitFor(t, 60*time.Second, h+"'s subscriber receiving every event", func() bool { return s.complete(sent) })
	}
	end := sampleSoak(r, subs)
	printSoak(t, "end", time.Since(start), end)
	checkSoak(t, sent, subs, peakWarm, first, last, recent)
	dropped := 0
	for _, h := range soakHosts {
		dropped += r.counted(h)
	}
	t.Logf("soak: the hosts' kernels dropped %d bus datagrams", dropped)
}

// checkSoak fails the soak on an RSS grown too much or a reliable event
// missing, doubled or reordered, and prints the summary line.
func checkSoak(t *testing.T, sent map[string]int, subs map[string]*soakSub, peakWarm map[string]float64, first, last map[string]soakSample, recent []map[string]soakSample) {
	var line []string
	for _, h := range soakHosts {
		s := subs[h].tally(sent)
		if s.missing != 0 || s.duplicates != 0 || s.reordered != 0 {
			t.Errorf("%s's subscriber: %d missing, %d duplicates, %d reordered of %d", h, s.missing, s.duplicates, s.reordered, s.sent)
		}
		base := max(peakWarm[h], first[h].h.rssMiB)
		var endRSS float64
		for _, r := range recent {
			endRSS += r[h].h.rssMiB / float64(len(recent))
		}
		growth := endRSS/base - 1
		if growth > soakRSSGrowth && endRSS-base > soakRSSNoise {
			t.Errorf("%s: RSS grew %.1f %% after warm-up (%.1f -> %.1f MiB)", h, 100*growth, base, endRSS)
		}
		line = append(line, fmt.Sprintf("%s rss %.1f->%.1f MiB (%+.1f %%) goroutines %.0f->%.0f heap %.1f->%.1f MiB delivered %d lost %d",
			h, base, endRSS, 100*growth, first[h].h.goroutines, last[h].h.goroutines,
			first[h].h.heapMiB, last[h].h.heapMiB, s.delivered, s.missing))
	}
	t.Logf("soak summary: %s", strings.Join(line, "; "))
}

// soakSample is one reading of a daemon and its host's subscriber.
type soakSample struct {
	h         health
	delivered int
	lossRep   float64
}

// sampleSoak reads every daemon's metrics and subscriber's count.
func sampleSoak(r *rig, subs map[string]*soakSub) map[string]soakSample {
	out := map[string]soakSample{}
	for _, h := range soakHosts {
		out[h] = soakSample{h: healthOf(r.d[h]), delivered: subs[h].delivered(), lossRep: losses(r.d[h])}
	}
	return out
}

// printSoak logs a reading.
func printSoak(t *testing.T, what string, at time.Duration, s map[string]soakSample) {
	for _, h := range soakHosts {
		t.Logf("soak %-5s %8v %s: %v, delivered %d, loss reports %.0f", what, at.Round(time.Second), h, s[h].h, s[h].delivered, s[h].lossRep)
	}
}

// soakPacer publishes numbered events on one scope until stopped.
type soakPacer struct{ p *pacer }

// startSoakPacer starts publishing "<host>:<n>" events on sc.
func startSoakPacer(pub *client, sc, host string) *soakPacer {
	p := &pacer{sent: make(chan int, 1), stop: make(chan struct{})}
	go func() {
		const tick = 10 * time.Millisecond
		t := time.NewTicker(tick)
		defer t.Stop()
		per, i := max(soakRate/int(time.Second/tick), 1), 0
		for {
			select {
			case <-p.stop:
				p.sent <- i
				return
			case <-t.C:
			}
			bodies := make([][]byte, 0, per)
			for range per {
				b, err := notification.Marshal(pub.event(sc, schemaText, fmt.Appendf(nil, "%s:%d", host, i)))
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
	}()
	return &soakPacer{p: p}
}

// stop ends publishing and returns how many events were sent.
func (s *soakPacer) stop() int { return s.p.wait(true) }

// soakSub is a subscriber that checks the numbered events as they come,
// keeping a bitmap per sender instead of the events, so that a long soak
// holds little memory; probes are kept for waitRoute.
type soakSub struct {
	c *client

	mu     sync.Mutex
	seen   map[string][]uint64 // per sender, bit i: event i arrived
	next   map[string]int      // per sender: one past the highest arrived
	dups   map[string]int
	reord  map[string]int
	count  int
	readEr error
}

// newSoakSub connects a subscriber on /soak/ to d.
func newSoakSub(t *testing.T, d *daemon, name string) *soakSub {
	s := &soakSub{c: connect(t, d, name, nil), seen: map[string][]uint64{}, next: map[string]int{},
		dups: map[string]int{}, reord: map[string]int{}}
	go s.read()
	s.c.listen("/soak/")
	return s
}

// read checks every event until the connection ends.
func (s *soakSub) read() {
	defer close(s.c.done)
	for {
		body, err := s.c.conn.Recv()
		if errors.Is(err, io.EOF) {
			s.c.conn.CloseWrite()
		}
		if err != nil {
			return
		}
		ev, err := notification.Unmarshal(body)
		if err != nil {
			s.mu.Lock()
			s.readEr = err
			s.mu.Unlock()
			continue
		}
		if ev.WireSchema != schemaText {
			s.c.mu.Lock()
			s.c.evs = append(s.c.evs, ev) // probes and Hellos, for waitRoute and listen
			s.c.at = append(s.c.at, time.Now())
			s.c.mu.Unlock()
			continue
		}
		s.note(string(ev.Data))
	}
}

// note records event "<host>:<n>".
func (s *soakSub) note(data string) {
	h, num, ok := strings.Cut(data, ":")
	i, err := strconv.Atoi(num)
	if !ok || err != nil || i < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	bm := s.seen[h]
	for len(bm) <= i/64 {
		bm = append(bm, 0)
	}
	s.seen[h] = bm
	switch {
	case bm[i/64]&(1<<(i%64)) != 0:
		s.dups[h]++
		return
	case i < s.next[h]:
		s.reord[h]++
	}
	bm[i/64] |= 1 << (i % 64)
	s.next[h] = max(s.next[h], i+1)
	s.count++
}

// delivered returns how many distinct events arrived.
func (s *soakSub) delivered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// tally counts, against sent per sender, what arrived.
func (s *soakSub) tally(sent map[string]int) tally {
	s.mu.Lock()
	defer s.mu.Unlock()
	var tl tally
	for h, n := range sent {
		tl.sent += n
		tl.duplicates += s.dups[h]
		tl.reordered += s.reord[h]
		bm := s.seen[h]
		for i := range n {
			if i/64 < len(bm) && bm[i/64]&(1<<(i%64)) != 0 {
				tl.delivered++
			} else {
				tl.missing++
			}
		}
	}
	return tl
}

// complete reports whether every sent event arrived.
func (s *soakSub) complete(sent map[string]int) bool { return s.tally(sent).missing == 0 }
