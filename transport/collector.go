package transport

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/metrics"
)

// Collector returns the Prometheus collector of the readers' counters:
// how often they polled for the answer to a reply instead of sleeping, the
// own datagrams they set aside and their failed reads, read from one
// snapshot of stats per scrape.
func Collector(stats func() Stats) prometheus.Collector {
	return metrics.NewSnapshotCollector(stats,
		metrics.SnapshotMetric[Stats]{Name: "rsbd_spin_waits_total", Type: prometheus.CounterValue,
			Help:  "Times a UDP reader polled its socket after a delivery that was answered, instead of sleeping.",
			Value: func(s Stats) float64 { return float64(s.SpinWaits) }},
		metrics.SnapshotMetric[Stats]{Name: "rsbd_spin_hits_total", Type: prometheus.CounterValue,
			Help:  "Polls of a UDP reader during which the next datagram arrived (a wake-up saved).",
			Value: func(s Stats) float64 { return float64(s.SpinHits) }},
		metrics.SnapshotMetric[Stats]{Name: "rsbd_spin_skipped_total", Type: prometheus.CounterValue,
			Help:  "Answered deliveries after which a UDP reader slept at once because too few recent polls found their answer (a busy host).",
			Value: func(s Stats) float64 { return float64(s.SpinSkips) }},
		metrics.SnapshotMetric[Stats]{Name: "rsbd_spin_resumes_total", Type: prometheus.CounterValue,
			Help:  "Polls of a UDP reader that went on after only its own multicast datagrams came back (the answer still to come).",
			Value: func(s Stats) float64 { return float64(s.SpinResumes) }},
		metrics.SnapshotMetric[Stats]{Name: "rsbd_transport_own_datagrams_total", Type: prometheus.CounterValue,
			Help:  "This node's own multicast datagrams looped back to a group socket it joined, and set aside there.",
			Value: func(s Stats) float64 { return float64(s.Own) }},
		metrics.SnapshotMetric[Stats]{Name: "rsbd_transport_receive_errors_total", Type: prometheus.CounterValue,
			Help:  "Reads of a UDP socket that failed (the reader goes on).",
			Value: func(s Stats) float64 { return float64(s.ReceiveErrors) }},
	)
}

// AddDrops adds the datagrams the transport dropped to dc, by the reason
// rsbd_drops_total gives them.
func (s Stats) AddDrops(dc *metrics.DropCounts) {
	dc[metrics.DropSendError] += s.SendErrors
	dc[metrics.DropSocketBuffer] += s.KernelDrops
	dc[metrics.DropDatagramTooLarge] += s.Oversize
}
