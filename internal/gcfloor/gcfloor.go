package gcfloor

import (
	"errors"
	"fmt"
	"math"
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

// limitFor is the memory limit after a collection: the floor, or what
// GOGC would allow if that is more: the live heap, its growth of live ×
// percent / 100 before the next collection, and nonHeap, the memory the
// runtime holds besides the heap (stacks, metadata), which the limit
// counts too. Heap pages the collection freed are not counted: a limit
// that counted them would rise by the growth at every collection, and
// the heap with it (to about 20 times the live heap, where the runtime's
// scavenger returns as much memory as the limit gains).
func limitFor(floor, nonHeap, live uint64, percent int) uint64 {
	p := uint64(percent)
	growth := live/100*p + live%100*p/100 // live × percent / 100 without overflow
	if nonHeap > math.MaxInt64-growth || nonHeap+growth > math.MaxInt64-live {
		return math.MaxInt64
	}
	return max(floor, nonHeap+live+growth)
}

type controller struct {
	floor   uint64
	capped  bool // floor is the cgroup's share, below the one asked
	percent int
	stopped bool          // guarded by mu
	adjusts atomic.Uint64 // limits set, for tests
	prevGC  int
	prevLim int64
	samples []metrics.Sample
	mu      sync.Mutex // serializes adjust with stop
}

// active is the controller in force, if any.
var active atomic.Pointer[controller]

// Metric names read after each collection.
const (
	metricTotal    = "/memory/classes/total:bytes"
	metricReleased = "/memory/classes/heap/released:bytes"
	metricFree     = "/memory/classes/heap/free:bytes"
	metricObjects  = "/memory/classes/heap/objects:bytes"
	metricLive     = "/gc/heap/live:bytes"
)

// Start puts the heap floor in force for the process (EffectiveFloor: cfg's,
// within the process's cgroup limit) and returns the function that
// restores the GOGC and memory limit it found.
func Start(cfg Config) (stop func(), err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	floor, capped := EffectiveFloor(cfg)
	c := &controller{floor: floor, capped: capped, percent: cfg.Percent,
		samples: []metrics.Sample{{Name: metricTotal}, {Name: metricReleased}, {Name: metricFree}, {Name: metricObjects}, {Name: metricLive}}}
	if !active.CompareAndSwap(nil, c) {
		return nil, ErrStarted
	}
	c.prevLim = debug.SetMemoryLimit(int64(c.floor))
	c.prevGC = debug.SetGCPercent(-1)
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

// adjust sets the limit from what the last collection left; it reports
// false once the controller is stopped.
func (c *controller) adjust() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return false
	}
	metrics.Read(c.samples)
	var v [5]uint64
	for i := range c.samples {
		v[i] = c.samples[i].Value.Uint64()
	}
	total, released, free, objects, live := v[0], v[1], v[2], v[3], v[4]
	// The heap's share of total: its objects (live and not yet swept),
	// its free pages and those returned to the kernel.
	nonHeap := total - min(total, released+free+objects)
	debug.SetMemoryLimit(int64(limitFor(c.floor, nonHeap, live, c.percent)))
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
	debug.SetMemoryLimit(c.prevLim)
	active.Store(nil)
}
