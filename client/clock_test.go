package client

import (
	"testing"
	"time"
)

// TestClockFollowsTheWallClock: over several rebase periods every
// derived time lies between wall-clock readings taken around it (to the
// microsecond) and none goes back by more than one.
func TestClockFollowsTheWallClock(t *testing.T) {
	var c microClock
	last := int64(0)
	rebases := 0
	for end := time.Now().Add(20 * clockRebase); time.Now().Before(end); {
		before := time.Now().UnixMicro()
		prev := c.base.Load()
		v := c.now()
		after := time.Now().UnixMicro()
		if c.base.Load() != prev {
			rebases++
		}
		if v < before-1 || v > after+1 {
			t.Fatalf("derived %d µs, outside the wall clock's %d..%d", v, before, after)
		}
		if v < last-1 {
			t.Fatalf("derived %d µs after %d", v, last)
		}
		last = v
	}
	if rebases < 5 {
		t.Fatalf("%d rebases in 20 periods", rebases)
	}
}

func BenchmarkClock(b *testing.B) {
	var sink int64
	b.Run("derived", func(b *testing.B) {
		for b.Loop() {
			sink += nowMicros()
		}
	})
	b.Run("time.Now", func(b *testing.B) {
		for b.Loop() {
			sink += time.Now().UnixMicro()
		}
	})
	_ = sink
}
