package engine

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/metrics"
)

// Paths counts how received batches reached the engine's machines and why
// the engine goroutine woke: a batch a reader handled itself costs no
// goroutine hand-off, a handed-off one costs two (engine, then delivery),
// which is where round-trip tails come from.
type Paths struct {
	// ReceiveDirect is the batches a UDP reader handled on its goroutine.
	ReceiveDirect uint64
	// ReceiveWaited is those of them for which the reader waited for
	// another goroutine's section to end.
	ReceiveWaited uint64
	// ReceiveQueued is the batches handed to the engine goroutine because
	// earlier publishes or batches were still queued (order is kept) or a
	// Hold was under way; a batch the full queue drops is counted in
	// rsbd_drops_total instead.
	ReceiveQueued uint64
	// TimerWakes is the engine goroutine's timer wake-ups; IdleWakes
	// those that found nothing to do.
	TimerWakes, IdleWakes uint64
}

// paths holds the Paths counters, written by the goroutines that take
// those paths.
type paths struct {
	rxDirect, rxWaited, rxQueued, timer, idle atomic.Uint64
}

// Paths returns the counters of the receive paths and timer wake-ups.
func (e *Engine) Paths() Paths {
	return Paths{
		ReceiveDirect: e.paths.rxDirect.Load(),
		ReceiveWaited: e.paths.rxWaited.Load(),
		ReceiveQueued: e.paths.rxQueued.Load(),
		TimerWakes:    e.paths.timer.Load(),
		IdleWakes:     e.paths.idle.Load(),
	}
}

// PathsCollector returns the Prometheus collector of the engine's path
// counters, read from one snapshot per scrape.
func PathsCollector(p func() Paths) prometheus.Collector {
	batches := func(path string, v func(Paths) uint64) metrics.SnapshotMetric[Paths] {
		return metrics.SnapshotMetric[Paths]{Name: "rsbd_engine_receive_batches_total", Type: prometheus.CounterValue,
			Help:   "Batches of received datagrams by how they reached the engine: handled by the reading goroutine at once (direct) or after waiting for another goroutine's section (waited), or handed to the engine goroutine because earlier input was queued (queued).",
			Labels: prometheus.Labels{"path": path},
			Value:  func(s Paths) float64 { return float64(v(s)) }}
	}
	return metrics.NewSnapshotCollector(p,
		batches("direct", func(s Paths) uint64 { return s.ReceiveDirect - s.ReceiveWaited }),
		batches("waited", func(s Paths) uint64 { return s.ReceiveWaited }),
		batches("queued", func(s Paths) uint64 { return s.ReceiveQueued }),
		metrics.SnapshotMetric[Paths]{Name: "rsbd_engine_timer_wakes_total", Type: prometheus.CounterValue,
			Help:  "Times the engine goroutine woke for a timer (retransmission, heartbeat, ACK, reassembly deadlines).",
			Value: func(s Paths) float64 { return float64(s.TimerWakes) }},
		metrics.SnapshotMetric[Paths]{Name: "rsbd_engine_idle_wakes_total", Type: prometheus.CounterValue,
			Help:  "Timer wake-ups of the engine goroutine that found nothing due.",
			Value: func(s Paths) float64 { return float64(s.IdleWakes) }},
	)
}
