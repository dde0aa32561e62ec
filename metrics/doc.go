// Package metrics owns rsbd's Prometheus instrumentation: the metric families, the
// registry and the HTTP endpoints /metrics, /livez and /readyz.
//
// # Naming
//
// Every rsbd family starts with "rsbd_", uses base units (bytes, seconds), and counters
// end in "_total". Labels only ever take values from the fixed enums of this package
// (Path, Kind, DropReason, LossReason, Queue, Buffer); scopes, group names and peer
// addresses are never label values, so the number of series is bounded by the code, not
// by traffic. The enums are append-only: other packages map their own reasons into them.
//
// # Push style (hot paths)
//
// New creates every family once and pre-resolves each labelled child into an array
// indexed by the enum, so hot paths do no map lookups or label hashing:
//
//	m.EventsIn[metrics.PathSocket].Inc()
//	m.BytesIn[metrics.PathSocket].Add(float64(n))
//	m.DatagramsOut[metrics.KindNack].Inc()
//	m.Drop(metrics.DropSlowClient)
//
// Heartbeats and NACKs on the wire are counted as datagrams by kind
// (rsbd_sent_datagrams_total{kind="heartbeat"}, {kind="nack"}); the NACK and repair
// counters count what the reliability machines did with them (sequence numbers
// requested, NACKs addressed to this daemon, suppressed NACKs, repairs).
//
// # Pull style (stats snapshots)
//
// Packages that keep their own Stats structs need not know about Prometheus. The node
// registers, once, a collector that takes one snapshot per scrape and turns its fields
// into metrics:
//
//	m.Register(metrics.NewSnapshotCollector(asm.Stats,
//		metrics.SnapshotMetric[fragmentation.Stats]{
//			Name: "rsbd_reassembly_partial_events", Help: "...",
//			Type: prometheus.GaugeValue,
//			Value: func(s fragmentation.Stats) float64 { return float64(s.Partial) },
//		}))
//
// Drop counters kept by other packages feed the shared rsbd_drops_total{reason} family
// through AddDropSource, so drops pushed with Drop and drops pulled from snapshots sum up
// in one series per reason. The snapshot functions run on the scrape goroutine: they must
// be safe for concurrent use, cheap and non-blocking (copy counters under a lock or read
// atomics), and counters they report must never decrease. For a single value,
// prometheus.NewGaugeFunc and prometheus.NewCounterFunc serve as well.
//
// Gauges of New's families that mirror state kept elsewhere (queue depths, open
// connections) are set by hooks given to AddRefresh. Every family of New is one
// collector, which runs those hooks before it reads any family: a registry reads its
// collectors concurrently, so a gauge set from another collector's Collect could be
// read before it was set.
//
// # HTTP
//
// NewHandler serves /metrics (Prometheus text or OpenMetrics by negotiation), /livez
// (200 while the process serves HTTP) and /readyz (200 when the readiness check passes,
// 503 with the reason otherwise). Server runs it with bounded timeouts.
package metrics
