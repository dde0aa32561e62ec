package metrics

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics holds every rsbd metric family. Fields are safe for concurrent use; labelled
// families are pre-resolved into arrays indexed by their enum, so hot paths index an
// array and never look up labels.
type Metrics struct {
	// EventsIn and EventsOut count events received from and sent to each path.
	EventsIn, EventsOut [NumPaths]prometheus.Counter
	// BytesIn and BytesOut count the serialized Notification bytes of those events, per
	// path (datagram headers and socket frame lengths are not included).
	BytesIn, BytesOut [NumPaths]prometheus.Counter
	// DatagramsIn and DatagramsOut count decoded daemon-to-daemon datagrams by kind.
	DatagramsIn, DatagramsOut [NumKinds]prometheus.Counter

	// NackedDatagrams counts sequence numbers this daemon requested in NACKs it sent.
	NackedDatagrams prometheus.Counter
	// NacksReceived counts NACKs addressed to this daemon's sender streams (NACKs for
	// other daemons overheard on a group only count as datagrams).
	NacksReceived prometheus.Counter
	// NacksSuppressed counts NACKs not sent because an equal NACK or the repair was seen.
	NacksSuppressed prometheus.Counter
	// RepairsSent counts datagrams re-sent in answer to NACKs.
	RepairsSent prometheus.Counter
	// RepairsReceived counts repair datagrams that filled a gap.
	RepairsReceived prometheus.Counter
	// FragmentBuffersRecycled counts the buffers of published events (large
	// events' fragments, small events' record slabs) put back for reuse once
	// no sender stream held them.
	FragmentBuffersRecycled prometheus.Counter

	// LossReports counts loss reports by reason; LostDatagrams the datagrams they cover.
	LossReports, LostDatagrams [NumLossReasons]prometheus.Counter

	// Peers is the number of live cluster peers.
	Peers prometheus.Gauge
	// MulticastGroups is the number of multicast groups joined.
	MulticastGroups prometheus.Gauge
	// LingeringScopes counts scopes no local sink wants any more but that
	// are still received until the peers confirmed the change.
	LingeringScopes prometheus.Gauge
	// SocketConnections is the number of open RSB socket client connections.
	SocketConnections prometheus.Gauge
	// SocketAccepted counts accepted RSB socket client connections.
	SocketAccepted prometheus.Counter
	// QueueDepth is the number of items in each bounded queue.
	QueueDepth [NumQueues]prometheus.Gauge
	// BufferedBytes is the number of bytes held in each bounded buffer.
	BufferedBytes [NumBuffers]prometheus.Gauge

	// EventSize observes the serialized size of each event received, per path.
	EventSize [NumPaths]prometheus.Observer
	// DeliveryLatency observes, per path the event came from, the seconds from its
	// send time to its local delivery. Across hosts it includes the clock offset.
	DeliveryLatency [NumPaths]prometheus.Observer

	reg   prometheus.Registerer
	drops *dropCollector
	fams  *familySet
}

// Option configures New.
type Option func(*options)

type options struct{ version string }

// WithVersion sets the version label of rsbd_build_info; by default it is the main
// module's version from the build information.
func WithVersion(v string) Option { return func(o *options) { o.version = v } }

// NewRegistry returns a fresh registry with the Go runtime and process collectors, the
// one to pass to New. Each daemon (and each test) uses its own.
func NewRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return r
}

// New creates every rsbd family and registers it with reg. It panics if reg already
// holds any of them, a programming error: use a fresh registry (NewRegistry) per daemon.
func New(reg prometheus.Registerer, opts ...Option) *Metrics {
	o := options{version: buildVersion()}
	for _, fn := range opts {
		fn(&o)
	}
	m := &Metrics{reg: reg, drops: newDropCollector(), fams: &familySet{}}
	f := factory{m.fams}
	f.counters("received_events_total", "Events received, by path.", "path", pathNames[:], m.EventsIn[:])
	f.counters("sent_events_total", "Events sent, by path.", "path", pathNames[:], m.EventsOut[:])
	f.counters("received_bytes_total", "Serialized event bytes received, by path.", "path", pathNames[:], m.BytesIn[:])
	f.counters("sent_bytes_total", "Serialized event bytes sent, by path.", "path", pathNames[:], m.BytesOut[:])
	f.counters("received_datagrams_total", "Datagrams received from other daemons, by kind.", "kind", kindNames[:], m.DatagramsIn[:])
	f.counters("sent_datagrams_total", "Datagrams sent to other daemons, by kind.", "kind", kindNames[:], m.DatagramsOut[:])
	m.NackedDatagrams = f.counter("nacked_datagrams_total", "Datagram sequence numbers requested in NACKs sent.")
	m.NacksReceived = f.counter("nacks_received_total", "NACKs received for this daemon's streams.")
	m.NacksSuppressed = f.counter("nacks_suppressed_total", "NACKs not sent because an equal NACK or the repair was seen.")
	m.RepairsSent = f.counter("repairs_sent_total", "Datagrams re-sent in answer to NACKs.")
	m.RepairsReceived = f.counter("repairs_received_total", "Repair datagrams received that filled a gap.")
	m.FragmentBuffersRecycled = f.counter("fragment_buffers_recycled_total", "Buffers of published events (the fragments of large events, the record slabs of small ones) the engine put back for reuse once no sender stream held them.")
	f.counters("loss_reports_total", "Unrecoverable losses reported, by reason.", "reason", lossNames[:], m.LossReports[:])
	f.counters("lost_datagrams_total", "Datagrams covered by loss reports, by reason.", "reason", lossNames[:], m.LostDatagrams[:])
	m.Peers = f.gauge("peers", "Live cluster peers.")
	m.MulticastGroups = f.gauge("joined_multicast_groups", "Multicast groups joined.")
	m.LingeringScopes = f.gauge("lingering_scopes", "Scopes given up but still received until peers confirm the change.")
	m.SocketConnections = f.gauge("socket_connections", "Open RSB socket client connections.")
	m.SocketAccepted = f.counter("socket_accepted_connections_total", "RSB socket client connections accepted.")
	f.gauges("queue_depth", "Items in bounded queues, by queue.", "queue", queueNames[:], m.QueueDepth[:])
	f.gauges("buffered_bytes", "Bytes held in bounded buffers, by buffer.", "buffer", bufferNames[:], m.BufferedBytes[:])
	f.histograms("event_size_bytes", "Serialized size of events received, by path.", EventSizeBuckets, m.EventSize[:])
	f.histograms("delivery_latency_seconds", "Seconds from an event's send time to its local delivery, by path it came from.", LatencyBuckets, m.DeliveryLatency[:])
	f.buildInfo(o.version)
	f.add(m.drops)
	reg.MustRegister(m.fams)
	return m
}

// Register registers an additional collector, typically a NewSnapshotCollector, with the
// registry given to New.
func (m *Metrics) Register(c prometheus.Collector) error { return m.reg.Register(c) }

// Drop counts one drop for reason r. Reasons out of range are ignored.
func (m *Metrics) Drop(r DropReason) { m.DropN(r, 1) }

// DropN counts n drops for reason r. Reasons out of range are ignored.
func (m *Metrics) DropN(r DropReason, n uint64) {
	if m != nil {
		m.drops.add(r, n)
	}
}

// AddRefresh adds a hook that runs at every scrape before any rsbd family
// is read: the place to Set gauges and Add to counters that mirror state
// kept elsewhere, so that a scrape sees the state of its own time.
func (m *Metrics) AddRefresh(fn func()) { m.fams.addRefresh(fn) }

// AddDropSource adds a pull source to rsbd_drops_total: at every scrape src adds its
// package's cumulative drop counts into the counts it is given. See the package
// documentation for the rules a source must follow.
func (m *Metrics) AddDropSource(src func(into *DropCounts)) { m.drops.addSource(src) }

// factory creates rsbd families into one collector.
type factory struct{ fams *familySet }

func (f factory) add(c prometheus.Collector) { f.fams.cs = append(f.fams.cs, c) }

func (f factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help})
	f.add(c)
	return c
}

func (f factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help})
	f.add(g)
	return g
}

// counters creates a counter family with one label and fills out with its children,
// out[i] having label value values[i].
func (f factory) counters(name, help, label string, values []string, out []prometheus.Counter) {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, []string{label})
	f.add(v)
	for i, val := range values {
		out[i] = v.WithLabelValues(val)
	}
}

// gauges is counters for gauges.
func (f factory) gauges(name, help, label string, values []string, out []prometheus.Gauge) {
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, []string{label})
	f.add(v)
	for i, val := range values {
		out[i] = v.WithLabelValues(val)
	}
}

// histograms creates a histogram family labelled by path.
func (f factory) histograms(name, help string, buckets []float64, out []prometheus.Observer) {
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets}, []string{"path"})
	f.add(v)
	for i, val := range pathNames {
		out[i] = v.WithLabelValues(val)
	}
}

// buildInfo registers rsbd_build_info, always 1, labelled with the versions.
func (f factory) buildInfo(version string) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace:   Namespace,
		Name:        "build_info",
		Help:        "Always 1; labelled with the rsbd version and the Go version that built it.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	g.Set(1)
	f.add(g)
}

// buildVersion returns the main module's version, or "unknown".
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "unknown"
}
