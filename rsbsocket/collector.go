package rsbsocket

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/metrics"
)

// Collector returns the Prometheus collector of the server's counters: its
// back-pressure (publisher waits, stalls, direct writes, writer starts),
// large frames grown, the answer poll, the connections it refused and
// those that ended, by reason, read from one snapshot of stats per scrape.
func Collector(stats func() Stats) prometheus.Collector {
	ms := []metrics.SnapshotMetric[Stats]{
		{Name: "rsbd_socket_publisher_waits_total", Type: prometheus.CounterValue,
			Help:  "Times a publishing client waited for a subscriber's full send queue.",
			Value: func(s Stats) float64 { return float64(s.Waits) }},
		{Name: "rsbd_socket_stalls_total", Type: prometheus.CounterValue,
			Help:  "Subscribers declared stalled after a publisher waited the stall timeout for them.",
			Value: func(s Stats) float64 { return float64(s.Stalls) }},
		{Name: "rsbd_socket_direct_writes_total", Type: prometheus.CounterValue,
			Help:  "Writes a forwarding client reader made itself to a connection without a writer goroutine.",
			Value: func(s Stats) float64 { return float64(s.DirectWrites) }},
		{Name: "rsbd_socket_writer_starts_total", Type: prometheus.CounterValue,
			Help:  "Writer goroutines started for a connection's backlog.",
			Value: func(s Stats) float64 { return float64(s.WriterStarts) }},
		{Name: "rsbd_socket_large_frames_grown_total", Type: prometheus.CounterValue,
			Help:  "Frame bodies over 1 MiB read in growing steps because the 64 MiB budget for bodies allocated whole was taken.",
			Value: func(s Stats) float64 { return float64(s.LargeGrown) }},
		{Name: "rsbd_socket_spin_waits_total", Type: prometheus.CounterValue,
			Help:  "Times a client reader polled for the answer to an event it relayed instead of sleeping.",
			Value: func(s Stats) float64 { return float64(s.SpinWaits) }},
		{Name: "rsbd_socket_spin_hits_total", Type: prometheus.CounterValue,
			Help:  "Polls for an answer that saw it (or the reader's own next frame) arrive.",
			Value: func(s Stats) float64 { return float64(s.SpinHits) }},
		{Name: "rsbd_socket_spin_skipped_total", Type: prometheus.CounterValue,
			Help:  "Relays to an answering client after which a reader slept at once because too few recent polls saw the answer (a busy host).",
			Value: func(s Stats) float64 { return float64(s.SpinSkips) }},
		{Name: "rsbd_socket_connections_refused_total", Type: prometheus.CounterValue,
			Help:  "Client connections closed at once because the connection limit was reached.",
			Value: func(s Stats) float64 { return float64(s.ConnsRefused) }},
		{Name: "rsbd_socket_refused_total", Type: prometheus.CounterValue,
			Help:   "Client connections closed at once, by reason: not_allowed (peer outside the allow list), connection_limit.",
			Labels: prometheus.Labels{"reason": "not_allowed"},
			Value:  func(s Stats) float64 { return float64(s.ConnsNotAllowed) }},
		{Name: "rsbd_socket_refused_total", Type: prometheus.CounterValue,
			Help:   "Client connections closed at once, by reason: not_allowed (peer outside the allow list), connection_limit.",
			Labels: prometheus.Labels{"reason": "connection_limit"},
			Value:  func(s Stats) float64 { return float64(s.ConnsRefused) }},
	}
	for r := range NumDisconnectReasons {
		ms = append(ms, metrics.SnapshotMetric[Stats]{Name: "rsbd_socket_disconnects_total", Type: prometheus.CounterValue,
			Help:   "Client connections ended, by reason.",
			Labels: prometheus.Labels{"reason": r.String()},
			Value:  func(s Stats) float64 { return float64(s.Disconnects[r]) }})
	}
	return metrics.NewSnapshotCollector(stats, ms...)
}

// AddDrops adds the frames the server dropped to dc, by the reason
// rsbd_drops_total gives them.
func (s Stats) AddDrops(dc *metrics.DropCounts) {
	dc[metrics.DropSlowClient] += s.Drops[DropQueueFull] + s.Drops[DropTimeout]
	dc[metrics.DropFrameTooLarge] += s.Drops[DropFrameTooLarge]
	dc[metrics.DropDecodeError] += s.Drops[DropMalformed] + s.Drops[DropBadIntrospection]
	dc[metrics.DropClosed] += s.Drops[DropClosed]
	dc[metrics.DropStreamLimit] += s.Drops[DropParticipantLimit]
	dc[metrics.DropBadHandshake] += s.Drops[DropHandshake]
}
