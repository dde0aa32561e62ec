package gcfloor

import (
	"errors"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		floor, live, scan uint64
		percent           int
		want              int
	}{
		{64 * mib, 4 * mib, 6 * mib, 100, 1000},     // growth reaches the floor first: 4 + 6 × 10 = 64
		{64 * mib, mib, mib + 1<<10, 100, 1600},     // a tiny heap: the minimum, 4 MiB × 16, decides
		{128 * mib, 40 * mib, 48 * mib, 100, 184},   // rounded up: 40 + 48 × 1.84 ≥ 128
		{128 * mib, 40 * mib, 47 * mib, 100, 188},   // 40 + 47 × 1.88 ≥ 128
		{128 * mib, 80 * mib, 90 * mib, 100, 100},   // growth at GOGC=100 passes the floor
		{128 * mib, 200 * mib, 210 * mib, 100, 100}, // above the floor: GOGC's own
		{128 * mib, 200 * mib, 210 * mib, 50, 50},   // a smaller percent
		{64 * mib, 4 * mib, 6 * mib, 5000, 5000},    // a larger percent than the floor needs
		{64 * mib, 0, 0, 100, 100},                  // nothing read: GOGC's own
		{1 << 40, 1, 1, 100, maxPercent},            // bounded
	} {
		if got := percentFor(c.floor, c.live, c.scan, c.percent); got != c.want {
			t.Errorf("percentFor(%d MiB, %d, %d, %d) = %d, want %d", c.floor>>20, c.live, c.scan, c.percent, got, c.want)
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

// readMetric reads one runtime metric.
func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// collectUntilAdjusted collects until c has adjusted the percent. One
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

func TestStartSetsThePercent(t *testing.T) {
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
	if p := currentPercent(); p < 100 {
		t.Fatalf("GOGC %d while the floor is in force, want at least 100", p)
	}
	if l := currentLimit(); l != prevLim {
		t.Fatalf("memory limit %d, want it left at %d", l, prevLim)
	}
	// A live heap of 32 MiB, above the floor: GOGC's own percent. The
	// cleanup of a collection made while sink grew may run late, with less
	// live: a later collection's adjustment supersedes it.
	for range 32 {
		sink = append(sink, make([]byte, 1<<20))
	}
	c := active.Load()
	for deadline := time.Now().Add(10 * time.Second); ; {
		collectUntilAdjusted(t, c)
		if currentPercent() == 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC %d with 32 MiB live above an 8 MiB floor, want 100", currentPercent())
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

// startAdjusted puts a floor of floorMiB in force until the test ends and
// collects until it adjusted GOGC; it skips the test when the cgroup caps
// the floor.
func startAdjusted(t *testing.T, floorMiB int) {
	t.Helper()
	stop, err := Start(Config{FloorMiB: floorMiB, Percent: 100})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	if f, capped, _ := InForce(); capped {
		t.Skipf("the cgroup caps the floor at %d MiB", f>>20)
	}
	collectUntilAdjusted(t, active.Load())
}

// TestGoalIsTheFloor: with a small live heap the runtime's heap goal is
// the floor, to the MiB. It fails if the runtime's minimum heap (minHeap)
// changes.
func TestGoalIsTheFloor(t *testing.T) {
	const floor = 64 << 20
	startAdjusted(t, floor>>20)
	if live := readMetric(metricLive); live >= floor/2 {
		t.Skipf("live heap %d MiB, too large to judge", live>>20)
	}
	if g := readMetric("/gc/heap/goal:bytes"); g < floor || g > floor+1<<20 {
		t.Fatalf("heap goal %d B with a %d MiB floor, want the floor", g, floor>>20)
	}
}

// TestCollectionsWaitForTheFloor: 1 GiB of garbage with a small live heap
// takes about one collection per 64 MiB floor, where GOGC=100 alone would
// take one per few MiB.
func TestCollectionsWaitForTheFloor(t *testing.T) {
	startAdjusted(t, 64)
	const cycles = "/gc/cycles/total:gc-cycles"
	before := readMetric(cycles)
	var garbage []byte
	for range (1 << 30) / (64 << 10) {
		garbage = make([]byte, 64<<10)
		garbage[0] = 1
	}
	_ = garbage
	// 16 at the floor; the slack is for adjustments that run late.
	if n := readMetric(cycles) - before; n > 24 {
		t.Fatalf("%d collections for 1 GiB of garbage under a 64 MiB floor, want about 16", n)
	}
}
