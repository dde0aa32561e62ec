package qos

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// The reliability.md §4 tier-1 matrix, on the simulation harness.

var allClasses = []datagram.Class{
	datagram.UnreliableUnordered, datagram.UnreliableOrdered,
	datagram.ReliableUnordered, datagram.ReliableOrdered,
}

func className(c datagram.Class) string {
	return [...]string{"unrel-unord", "unrel-ord", "rel-unord", "rel-ord"}[c]
}

// matrixN is the number of datagrams per scenario: 10,000 (one record each,
// identifying an event), 2,000 with -short.
func matrixN() int {
	if testing.Short() {
		return 2000
	}
	return 10000
}

// checkReliable asserts that every node delivered all n events exactly once
// (duplicates and order are checked at each delivery) without loss reports.
func checkReliable(t *testing.T, s *sim) {
	t.Helper()
	for i, n := range s.nodes {
		if n.delivered != s.cfg.n || len(n.losses) != 0 {
			t.Errorf("receiver %d: delivered %d of %d, %d loss reports (first %+v)",
				i, n.delivered, s.cfg.n, len(n.losses), first(n.losses))
		}
	}
}

// checkUnreliable asserts the delivered fraction of each node is 1-p within
// 1.5 percentage points (wider with -short, where N is too small for that).
func checkUnreliable(t *testing.T, s *sim, p float64) {
	t.Helper()
	tol := max(0.015, 4*math.Sqrt(p*(1-p)/float64(s.cfg.n)))
	for i, n := range s.nodes {
		frac := float64(n.delivered) / float64(s.cfg.n)
		if math.Abs(frac-(1-p)) > tol {
			t.Errorf("receiver %d: delivered %.4f, want %.4f ± %.4f", i, frac, 1-p, tol)
		}
	}
}

func first(l []LossReport) any {
	if len(l) == 0 {
		return nil
	}
	return l[0]
}

func TestMatrixLoss(t *testing.T) {
	t.Parallel()
	for li, p := range []float64{0, 0.01, 0.10, 0.30} {
		for rx := 1; rx <= 3; rx++ {
			for _, class := range allClasses {
				name := fmt.Sprintf("loss=%g/rx=%d/%s", p, rx, className(class))
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					cfg := simConfig{class: class, n: matrixN(), interval: 200 * time.Microsecond,
						receivers: rx, loss: p, seed: uint64(100*li + 10*rx + int(class))}
					s := newSim(t, cfg)
					s.run(s.resolved)
					if class.Reliable() {
						checkReliable(t, s)
					} else {
						checkUnreliable(t, s, p)
					}
					logStats(t, s)
				})
			}
		}
	}
}

func TestMatrixDuplicationReordering(t *testing.T) {
	t.Parallel()
	for _, class := range allClasses {
		t.Run(className(class), func(t *testing.T) {
			t.Parallel()
			s := newSim(t, simConfig{class: class, n: matrixN(), interval: 200 * time.Microsecond,
				receivers: 3, dup: 0.1, reorder: 0.1, reorderMin: time.Millisecond,
				reorderMax: 20 * time.Millisecond, seed: 31 + uint64(class)})
			s.run(s.resolved)
			// Duplicates and order violations fail at delivery; reliable
			// classes must also deliver everything.
			if class.Reliable() {
				checkReliable(t, s)
			}
			for i, n := range s.nodes {
				st := n.table.Stats()
				if st.Duplicates == 0 {
					t.Errorf("receiver %d saw no duplicates: the fault injection is not working", i)
				}
				if class == datagram.UnreliableOrdered && st.LateDrops == 0 {
					t.Errorf("receiver %d dropped nothing late under reordering", i)
				}
			}
			logStats(t, s)
		})
	}
}

// logStats logs the figures of a run: deliveries, NACKs, repairs, latency.
func logStats(t *testing.T, s *sim) {
	t.Helper()
	ss := s.sender().Stats()
	for i, n := range s.nodes {
		st := n.table.Stats()
		p50, p99 := percentiles(n.latency)
		t.Logf("rx%d: delivered %d/%d lost %d dup %d late %d | nacks %d ranges %d suppressed %d | p50 %v p99 %v",
			i, n.delivered, s.cfg.n, n.lost, st.Duplicates, st.LateDrops, st.NacksSent, st.NackRanges,
			st.NacksSuppressed, p50, p99)
	}
	t.Logf("sender: repairs %d merged %d dropped %d gone %d heartbeats %d; steps %d, virtual %v",
		ss.RepairsSent, ss.RepairsMerged, ss.RepairsDropped, ss.GoneSent, ss.Heartbeats, s.steps, s.now.Sub(simBase))
}
