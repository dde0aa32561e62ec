package spinpay

import (
	"sync/atomic"
	"time"
)

// gap is the preemption gap in force: preemptGap, or 0 while a test
// ignores preemption.
var gap atomic.Int64

func init() { gap.Store(int64(preemptGap)) }

// Preempted reports whether prev and now, two consecutive checks of a
// poll, lie so far apart that the polling thread lost its CPU between
// them: the poll then ends as a miss.
func Preempted(prev, now time.Time) bool {
	g := time.Duration(gap.Load())
	return g > 0 && now.Sub(prev) > g
}

// IgnorePreemption makes every poll run its course however its checks are
// spaced, until restore is called: for tests whose polls must see their
// answer on a loaded host or under the race detector.
func IgnorePreemption() (restore func()) {
	old := gap.Swap(0)
	return func() { gap.Store(old) }
}
