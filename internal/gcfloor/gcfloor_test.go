package gcfloor

import (
	"errors"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"
)

func TestLimitFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		nonHeap, live uint64
		percent       int
		want          uint64
	}{
		{2 * mib, 4 * mib, 100, 64 * mib},            // small heap: the floor
		{4 * mib, 80 * mib, 100, 164 * mib},          // above it: GOGC's growth
		{4 * mib, 80 * mib, 50, 124 * mib},           // a smaller percent
		{math.MaxInt64 - 1, mib, 100, math.MaxInt64}, // no overflow
		{mib, math.MaxInt64 / 2, 100, math.MaxInt64}, // nor here
	} {
		if got := limitFor(64*mib, c.nonHeap, c.live, c.percent); got != c.want {
			t.Errorf("limitFor(64 MiB, %d, %d, %d) = %d, want %d", c.nonHeap, c.live, c.percent, got, c.want)
		}
	}
}

func TestConfig(t *testing.T) {
	if err := (Config{FloorMiB: -1}).Validate(); !errors.Is(err, ErrConfig) {
		t.Fatalf("negative floor: %v", err)
	}
	if c := (Config{}).withDefaults(); c != DefaultConfig() {
		t.Fatalf("zero value %+v, want %+v", c, DefaultConfig())
	}
}

// currentLimit reads the memory limit without changing it.
func currentLimit() int64 { return debug.SetMemoryLimit(-1) }

// currentPercent reads GOGC's percent.
func currentPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// collectUntilAdjusted collects until c has adjusted the limit. One
// collection may pass without: a cleanup that adjusted just before it may
// arm the next sentinel while it marks, and a sentinel allocated then
// survives it. A chain that stays silent over collections for 10 s fails
// the test.
func collectUntilAdjusted(t *testing.T, c *controller) {
	t.Helper()
	before := c.adjusts.Load()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		wait := time.Now().Add(time.Second)
		for time.Now().Before(wait) {
			if c.adjusts.Load() != before {
				return
			}
			runtime.Gosched()
		}
	}
	t.Fatal("no adjustment after collections for 10 s")
}

// sink keeps allocations live.
var sink [][]byte

func TestStartKeepsTheLimitAboveTheLiveHeap(t *testing.T) {
	prevGC, prevLim := currentPercent(), currentLimit()
	stop, err := Start(Config{FloorMiB: 8, Percent: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Start(Config{}); !errors.Is(err, ErrStarted) {
		t.Fatalf("second Start: %v, want ErrStarted", err)
	}
	if f, capped, ok := InForce(); !ok || f != 8<<20 && !capped {
		t.Fatalf("InForce = %d, %v, %v; want the 8 MiB floor (or the cgroup's share)", f, capped, ok)
	}
	if p := currentPercent(); p != -1 {
		t.Fatalf("GOGC %d while the floor is in force, want off (-1)", p)
	}
	if l := currentLimit(); l < 8<<20 {
		t.Fatalf("limit %d, want at least the 8 MiB floor", l)
	}
	// A live heap of 32 MiB: after a collection the limit must leave it
	// room to double, or the collector would run without end.
	for range 32 {
		sink = append(sink, make([]byte, 1<<20))
	}
	// The cleanup of a collection made while sink grew may run late, with
	// less live: a later collection's adjustment supersedes it.
	c := active.Load()
	for deadline := time.Now().Add(10 * time.Second); ; {
		collectUntilAdjusted(t, c)
		if currentLimit() >= 64<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("limit %d MiB with 32 MiB live, want at least 64", currentLimit()>>20)
		}
	}
	sink = nil
	stop()
	stop() // idempotent
	if _, _, ok := InForce(); ok {
		t.Fatal("InForce reports a floor after stop")
	}
	if p, l := currentPercent(), currentLimit(); p != prevGC || l != prevLim {
		t.Fatalf("after stop: GOGC %d, limit %d; want %d, %d", p, l, prevGC, prevLim)
	}
	// The cleanup armed before stop ends the chain: no more adjustments.
	n := c.adjusts.Load()
	runtime.GC()
	runtime.GC()
	if got := c.adjusts.Load(); got != n {
		t.Fatalf("%d adjustments after stop", got-n)
	}
	// A new Start is possible after stop.
	stop, err = Start(Config{})
	if err != nil {
		t.Fatal(err)
	}
	stop()
}

// TestLimitStaysWithGOGC: with a live heap above the floor and garbage
// made without pause, the limit stays near what GOGC=100 allows (twice
// the live heap and the runtime's own memory) over many collections; it
// must not rise with the heap pages each collection frees.
//
// A collection counts what the loop allocates while it marks as live, as
// GOGC's own pacing does; on a loaded host a slow mark inflates one
// collection's reading. So the test judges the smallest limit of the last
// ten collections: a ratchet raises every one of them.
func TestLimitStaysWithGOGC(t *testing.T) {
	stop, err := Start(Config{FloorMiB: 8, Percent: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	const live = 24 << 20
	for range live >> 20 {
		sink = append(sink, make([]byte, 1<<20))
	}
	defer func() { sink = nil }()
	c := active.Load()
	var garbage []byte
	var limits []int64
	deadline := time.Now().Add(20 * time.Second)
	seen := c.adjusts.Load()
	for start := seen; seen < start+30; {
		if time.Now().After(deadline) {
			t.Fatalf("%d adjustments in 20 s", seen-start)
		}
		garbage = make([]byte, 256<<10)
		garbage[0] = 1
		if n := c.adjusts.Load(); n != seen {
			seen = n
			limits = append(limits, currentLimit())
		}
	}
	_ = garbage
	// 2 × 24 MiB live, and 32 MiB for the runtime's own memory and the
	// rest of the test binary (the ratchet made 482 MiB of it).
	const want = 2*live + 32<<20
	last := limits[max(0, len(limits)-10):]
	if l := slices.Min(last); l > want {
		t.Fatalf("limit at least %d MiB over the last %d collections with %d MiB live, want at most %d (limits %v)",
			l>>20, len(last), live>>20, want>>20, last)
	}
}
