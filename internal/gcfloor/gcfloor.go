package gcfloor

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// ErrConfig is wrapped by the errors of Config.Validate.
var ErrConfig = errors.New("gcfloor: invalid config")

// ErrStarted is returned by Start while a floor is in force.
var ErrStarted = errors.New("gcfloor: already started")

// Config is a heap floor policy. The zero value is DefaultConfig.
type Config struct {
	// FloorMiB is the heap size, in MiB, below which the collector does not
	// run. Zero means DefaultFloorMiB.
	FloorMiB int
	// Percent is GOGC's growth above the floor. Zero means DefaultPercent.
	Percent int
}

// DefaultConfig returns the daemon's policy.
func DefaultConfig() Config { return Config{FloorMiB: DefaultFloorMiB, Percent: DefaultPercent} }

// Validate reports whether c, with its defaults, is usable.
func (c Config) Validate() error {
	if c.FloorMiB < 0 || c.FloorMiB > 1<<20 || c.Percent < 0 || c.Percent > 1<<16 {
		return fmt.Errorf("%w: floor %d MiB, percent %d", ErrConfig, c.FloorMiB, c.Percent)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.FloorMiB == 0 {
		c.FloorMiB = DefaultFloorMiB
	}
	if c.Percent == 0 {
		c.Percent = DefaultPercent
	}
	return c
}

// percentFor is the GOGC percent that puts the next collection's heap
// goal at the floor, or at percent's growth if that is more. The runtime's
// goal is live + scan × GOGC / 100, where scan is the live heap, the
// stacks and the globals the last collection scanned, and never below its
// minimum heap, minHeap × GOGC / 100: so the percent is the smaller of the
// one that reaches the floor by growth and the one whose minimum is the
// floor. Either way the goal is the floor (to the byte of rounding).
func percentFor(floor, live, scan uint64, percent int) int {
	if live >= floor || scan == 0 {
		return percent
	}
	byMin := floor / (minHeap / 100)
	byGrowth := ((floor-live)*100 + scan - 1) / scan // ceiling; floor ≤ 1 TiB: no overflow
	g := min(byMin, byGrowth, maxPercent)
	return max(percent, int(g))
}

type controller struct {
	floor   uint64
	capped  bool // floor is the cgroup's share, below the one asked
	percent int
	stopped bool          // guarded by mu
	adjusts atomic.Uint64 // percents set, for tests
	prevGC  int
	samples []metrics.Sample
	mu      sync.Mutex // serializes adjust with stop
}

// active is the controller in force, if any.
var active atomic.Pointer[controller]

// Metric names read after each collection: what the runtime's heap goal
// is computed from.
const (
	metricLive    = "/gc/heap/live:bytes"
	metricStacks  = "/gc/scan/stack:bytes"
	metricGlobals = "/gc/scan/globals:bytes"
)

// Start puts the heap floor in force for the process (EffectiveFloor: cfg's,
// within the process's cgroup limit) and returns the function that
// restores the GOGC it found. The memory limit is left alone.
func Start(cfg Config) (stop func(), err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	floor, capped := EffectiveFloor(cfg)
	c := &controller{floor: floor, capped: capped, percent: cfg.Percent,
		samples: []metrics.Sample{{Name: metricLive}, {Name: metricStacks}, {Name: metricGlobals}}}
	if !active.CompareAndSwap(nil, c) {
		return nil, ErrStarted
	}
	c.prevGC = debug.SetGCPercent(c.percent)
	c.adjust()
	c.arm()
	return c.stop, nil
}

// InForce returns the floor in force, in bytes, and whether the cgroup's
// memory limit capped it below the one asked (see EffectiveFloor); ok is
// false when no Start is in force.
func InForce() (floor uint64, capped, ok bool) {
	c := active.Load()
	if c == nil {
		return 0, false, false
	}
	return c.floor, c.capped, true
}

// arm attaches the next adjustment to the end of the next collection. A
// sentinel allocated while a collection marks survives that collection
// (the cleanup goroutine ran late, on a loaded host): then one collection
// passes without an adjustment, and the next one makes it.
func (c *controller) arm() {
	s := new([sentinelSize]byte)
	runtime.AddCleanup(s, func(c *controller) {
		if c.adjust() {
			c.arm()
		}
	}, c)
}

// adjust sets GOGC from what the last collection left; it reports false
// once the controller is stopped.
func (c *controller) adjust() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return false
	}
	metrics.Read(c.samples)
	live := c.samples[0].Value.Uint64()
	scan := live + c.samples[1].Value.Uint64() + c.samples[2].Value.Uint64()
	debug.SetGCPercent(percentFor(c.floor, live, scan, c.percent))
	c.adjusts.Add(1)
	return true
}

// stop restores the settings Start found.
func (c *controller) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	c.stopped = true
	debug.SetGCPercent(c.prevGC)
	active.Store(nil)
}
