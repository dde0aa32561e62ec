package main

import "time"

// Payload sizes of the comparison.
var sizes = []int{64, 1 << 10, 64 << 10, 1 << 20}

// latencySizes are the payload sizes of the round-trip runs.
var latencySizes = []int{64, 1 << 10}

// plan is how much each run does.
type plan struct {
	// count and warm are the measured and warm-up events per payload size.
	// The warm-up is a tenth of the count, but at 64 B half of it: a
	// freshly started daemon grows its heap to its floor (128 MiB) before
	// it collects, and each page it touches the first time is a page
	// fault. A tenth of the 64 B events does not carry enough frames
	// through it to touch them all, so the first measured run of every
	// daemon paid them (a sixth of its CPU); the systems' steady state is
	// what is measured.
	count, warm map[int]int
	// pings and pingWarm are the measured and warm-up round trips.
	pings, pingWarm int
	// ddsThr and ddsLat are ddsperf's run times (it runs for a duration,
	// not a count; the median 1-s window is taken).
	ddsThr, ddsLat time.Duration
	// limit bounds one throughput run after its probe: a run that has not
	// received everything by then fails as too slow.
	limit time.Duration
	// scopes and listeners are the scaling steps; scaleCount events of
	// scaleSize bytes are measured at each (scaleCount/10 warm-up).
	scopes, listeners     []int
	scaleCount, scaleSize int
	// scaleReps is how many times each rsbd listener layout runs, back to
	// back; its figure is the median run.
	scaleReps int
	// scopeRounds is how many interleaved rounds the rsbd scope steps run
	// (after one not counted); a step's figure is its median run. A round
	// takes about 3 s, so the steps get more runs than the listener
	// layouts, whose largest takes 17 s a run: one run's rate swings by
	// up to ±15 % on this kind of host, and a median of five is steadier.
	scopeRounds int
	// sharedListeners are the steps of listeners multiplexed over one
	// socket connection (RSB clients put all of a process's participants
	// on one); spreadConns carries the largest listener step over that
	// many connections.
	sharedListeners []int
	spreadConns     int
	// natsConns are the steps of NATS subscriber connections.
	natsConns []int
	// idleSubs is how many subscriptions the memory figure averages over;
	// idleListeners how many listener participants on one connection.
	idleSubs, idleListeners int
}

func fullPlan() plan {
	return plan{
		count:       map[int]int{64: 2_000_000, 1 << 10: 1_000_000, 64 << 10: 30_000, 1 << 20: 2_000},
		warm:        map[int]int{64: 1_000_000, 1 << 10: 100_000, 64 << 10: 3_000, 1 << 20: 200},
		pings:       20_000,
		pingWarm:    2_000,
		ddsThr:      6 * time.Second,
		ddsLat:      5 * time.Second,
		limit:       60 * time.Second,
		scopes:      []int{1, 100, 10_000},
		listeners:   []int{1, 100, 1_000},
		scaleCount:  1_000_000,
		scaleSize:   64,
		scaleReps:   3,
		scopeRounds: 5,
		idleSubs:    10_000,

		sharedListeners: []int{100, 1_000},
		spreadConns:     10,
		natsConns:       []int{1, 1_000},
		idleListeners:   10_000,
	}
}

func quickPlan() plan {
	p := fullPlan()
	for k := range p.count {
		p.count[k] /= 10
		p.warm[k] /= 10
	}
	p.pings, p.pingWarm = 3_000, 300
	p.ddsThr, p.ddsLat = 3*time.Second, 3*time.Second
	p.limit = 20 * time.Second
	p.scaleCount = 50_000
	p.scaleReps, p.scopeRounds = 1, 1
	return p
}
