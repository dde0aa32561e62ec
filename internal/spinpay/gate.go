package spinpay

import "sync/atomic"

// Gate decides whether a poll for an answer pays, from the outcomes of the
// polls before it. Its zero value is ready and polls until misses pile up.
// It is safe for concurrent use.
type Gate struct {
	// miss is 1 - score, so that the zero value starts at score 1.
	miss    atomic.Int32
	skipped atomic.Uint32
	skips   atomic.Uint64
}

// Allow reports whether to poll now: while recent polls mostly hit, or as
// an occasional probe while they do not. A skipped poll is counted.
func (g *Gate) Allow() bool {
	if scoreOne-g.miss.Load() >= minScore {
		return true
	}
	if g.skipped.Add(1)%probeEvery == 0 {
		return true
	}
	g.skips.Add(1)
	return false
}

// Record reports a poll's outcome: hit when the answer came within it.
func (g *Gate) Record(hit bool) {
	for {
		m := g.miss.Load()
		target := int32(scoreOne)
		if hit {
			target = 0
		}
		n := m + (target-m)>>scoreShift
		if n == m && m != target { // the last step rounds to nothing
			n = target
		}
		if g.miss.CompareAndSwap(m, n) {
			return
		}
	}
}

// Skips is how many polls Allow refused.
func (g *Gate) Skips() uint64 { return g.skips.Load() }

// Polling reports whether the gate currently lets every poll through.
func (g *Gate) Polling() bool { return scoreOne-g.miss.Load() >= minScore }
