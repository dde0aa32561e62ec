package metrics

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// DropCounts holds cumulative drop counts indexed by reason.
type DropCounts [NumDropReasons]uint64

// dropCollector exports rsbd_drops_total{reason}: its own atomic counters plus the sum
// of the registered pull sources.
type dropCollector struct {
	desc   *prometheus.Desc
	counts [NumDropReasons]atomic.Uint64

	mu      sync.Mutex
	sources []func(*DropCounts)
}

func newDropCollector() *dropCollector {
	return &dropCollector{desc: prometheus.NewDesc(
		prometheus.BuildFQName(Namespace, "", "drops_total"),
		"Events, fragments, datagrams and frames dropped, by reason.",
		[]string{"reason"}, nil)}
}

func (d *dropCollector) add(r DropReason, n uint64) {
	if r < NumDropReasons {
		d.counts[r].Add(n)
	}
}

func (d *dropCollector) addSource(src func(*DropCounts)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sources = append(d.sources, src)
}

// Describe implements prometheus.Collector.
func (d *dropCollector) Describe(ch chan<- *prometheus.Desc) { ch <- d.desc }

// Collect implements prometheus.Collector: one series per reason, all reasons always.
func (d *dropCollector) Collect(ch chan<- prometheus.Metric) {
	var total DropCounts
	d.mu.Lock()
	sources := d.sources
	d.mu.Unlock()
	for _, src := range sources {
		src(&total)
	}
	for i := range total {
		v := total[i] + d.counts[i].Load()
		ch <- prometheus.MustNewConstMetric(d.desc, prometheus.CounterValue, float64(v), dropNames[i])
	}
}

// familySet collects every rsbd family as one collector, so that the
// refresh hooks run before any family is read. (A registry collects its
// collectors concurrently: a gauge set by another collector's Collect
// could be read before it is set.)
type familySet struct {
	cs []prometheus.Collector // fixed once New returns

	mu      sync.Mutex
	refresh []func()
}

func (f *familySet) addRefresh(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refresh = append(f.refresh, fn)
}

// Describe implements prometheus.Collector.
func (f *familySet) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range f.cs {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector: the refresh hooks, then every
// family.
func (f *familySet) Collect(ch chan<- prometheus.Metric) {
	f.mu.Lock()
	refresh := f.refresh
	f.mu.Unlock()
	for _, fn := range refresh {
		fn()
	}
	for _, c := range f.cs {
		c.Collect(ch)
	}
}

// SnapshotMetric describes one metric read from a stats snapshot of type S.
type SnapshotMetric[S any] struct {
	Name   string               // full name, rsbd_ prefix and unit suffix included
	Help   string               // one sentence
	Type   prometheus.ValueType // prometheus.CounterValue or prometheus.GaugeValue
	Labels prometheus.Labels    // constant labels, if any; values must come from a fixed set
	Value  func(S) float64      // reads the metric from the snapshot
}

// snapshotCollector implements NewSnapshotCollector.
type snapshotCollector[S any] struct {
	snapshot func() S
	metrics  []SnapshotMetric[S]
	descs    []*prometheus.Desc
}

// NewSnapshotCollector returns a collector that calls snapshot once per scrape and
// exports each of metrics from that one snapshot, so related values are consistent.
// Names must follow rsbd's rules (rsbd_ prefix, [a-z0-9_] only, "_total" on counters and
// only on counters); a violation, like any invalid label, surfaces as an error when the
// collector is registered.
func NewSnapshotCollector[S any](snapshot func() S, metrics ...SnapshotMetric[S]) prometheus.Collector {
	c := &snapshotCollector[S]{snapshot: snapshot, metrics: metrics}
	for _, m := range metrics {
		d := prometheus.NewDesc(m.Name, m.Help, nil, m.Labels)
		if err := checkName(m.Name, m.Type); err != nil {
			d = prometheus.NewInvalidDesc(err)
		}
		c.descs = append(c.descs, d)
	}
	return c
}

// checkName enforces rsbd's naming rules on a pull-style metric.
func checkName(name string, typ prometheus.ValueType) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("metrics: name %q: want rsbd_ followed by [a-z0-9_]", name)
	}
	if counter := typ == prometheus.CounterValue; counter != strings.HasSuffix(name, "_total") {
		return fmt.Errorf("metrics: name %q: counters and only counters end in _total", name)
	}
	return nil
}

var validName = regexp.MustCompile(`^` + Namespace + `_[a-z0-9_]*[a-z0-9]$`)

// Describe implements prometheus.Collector.
func (c *snapshotCollector[S]) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *snapshotCollector[S]) Collect(ch chan<- prometheus.Metric) {
	s := c.snapshot()
	for i, m := range c.metrics {
		metric, err := prometheus.NewConstMetric(c.descs[i], m.Type, m.Value(s))
		if err != nil {
			metric = prometheus.NewInvalidMetric(c.descs[i], err)
		}
		ch <- metric
	}
}
