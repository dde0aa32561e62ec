package client

import (
	"sync/atomic"
	"time"
)

// RSB stamps every event with wall-clock times in microseconds: its send
// time when published, its receive and deliver times when received. On a
// virtual machine a wall-clock reading (time.Now: the wall and the
// monotonic clock) costs twice a monotonic one, so the package reads the
// wall clock once per clockRebase and derives the times in between from
// the monotonic clock. A derived time is within a microsecond of a
// reading of the wall clock, but for what the system's time service
// slews in between (at most 0.5 µs in a millisecond); a step of the wall
// clock shows within clockRebase.

// clockBase is a wall-clock reading: at holds its monotonic reading too.
type clockBase struct {
	at time.Time
	us int64 // at in µs since the Unix epoch
}

// clock is the package's source of timestamps.
var clock microClock

// microClock derives wall-clock microseconds from the last base.
type microClock struct {
	base atomic.Pointer[clockBase]
}

// now returns the current time in µs since the Unix epoch.
func (c *microClock) now() int64 {
	if b := c.base.Load(); b != nil {
		if d := time.Since(b.at); d < clockRebase {
			return b.us + int64(d/time.Microsecond)
		}
	}
	t := time.Now()
	b := &clockBase{at: t, us: t.UnixMicro()}
	c.base.Store(b)
	return b.us
}

// nowMicros returns the current time in microseconds since the Unix epoch,
// RSB's timestamp unit.
func nowMicros() int64 { return clock.now() }
