package metrics

import (
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// families gathers reg and returns the rsbd families by name.
func families(t *testing.T, reg prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	out := make(map[string]*dto.MetricFamily)
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), Namespace+"_") {
			out[mf.GetName()] = mf
		}
	}
	return out
}

func TestFamilies(t *testing.T) {
	reg := NewRegistry()
	New(reg, WithVersion("v1.2.3"))
	C, G, H := dto.MetricType_COUNTER, dto.MetricType_GAUGE, dto.MetricType_HISTOGRAM
	want := map[string]dto.MetricType{
		"rsbd_received_events_total":             C,
		"rsbd_sent_events_total":                 C,
		"rsbd_received_bytes_total":              C,
		"rsbd_sent_bytes_total":                  C,
		"rsbd_received_datagrams_total":          C,
		"rsbd_sent_datagrams_total":              C,
		"rsbd_nacked_datagrams_total":            C,
		"rsbd_nacks_received_total":              C,
		"rsbd_nacks_suppressed_total":            C,
		"rsbd_repairs_sent_total":                C,
		"rsbd_repairs_received_total":            C,
		"rsbd_fragment_buffers_recycled_total":   C,
		"rsbd_loss_reports_total":                C,
		"rsbd_lost_datagrams_total":              C,
		"rsbd_drops_total":                       C,
		"rsbd_peers":                             G,
		"rsbd_joined_multicast_groups":           G,
		"rsbd_lingering_scopes":                  G,
		"rsbd_socket_connections":                G,
		"rsbd_socket_accepted_connections_total": C,
		"rsbd_queue_depth":                       G,
		"rsbd_buffered_bytes":                    G,
		"rsbd_event_size_bytes":                  H,
		"rsbd_delivery_latency_seconds":          H,
		"rsbd_build_info":                        G,
	}
	got := families(t, reg)
	for name, typ := range want {
		mf, ok := got[name]
		if !ok {
			t.Errorf("family %s missing", name)
			continue
		}
		if mf.GetType() != typ {
			t.Errorf("%s has type %v, want %v", name, mf.GetType(), typ)
		}
		if mf.GetHelp() == "" {
			t.Errorf("%s has no help", name)
		}
	}
	for name, mf := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected family %s", name)
		}
		isCounter := mf.GetType() == dto.MetricType_COUNTER
		if isCounter != strings.HasSuffix(name, "_total") {
			t.Errorf("%s: counters and only counters end in _total", name)
		}
		if mf.GetType() == dto.MetricType_HISTOGRAM && !strings.HasSuffix(name, "_bytes") && !strings.HasSuffix(name, "_seconds") {
			t.Errorf("%s: histogram without a base unit suffix", name)
		}
		if regexp.MustCompile(`_(ms|millis|milliseconds|kb|kib|mb|mib|micro|microseconds)(_|$)`).MatchString(name) {
			t.Errorf("%s: not a base unit", name)
		}
	}
	// Buckets as configured.
	if b := got["rsbd_event_size_bytes"].GetMetric()[0].GetHistogram().GetBucket(); len(b) != len(EventSizeBuckets) {
		t.Errorf("event size has %d buckets, want %d", len(b), len(EventSizeBuckets))
	}
}

func TestLint(t *testing.T) {
	reg := NewRegistry()
	m := New(reg)
	m.EventSize[PathNetwork].Observe(1000)
	m.DeliveryLatency[PathSocket].Observe(0.002)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func TestLabelsBounded(t *testing.T) {
	reg := NewRegistry()
	m := New(reg, WithVersion("test"))
	m.AddDropSource(func(into *DropCounts) { into[DropDecodeError] += 2 })
	allowed := map[string][]string{
		"path":   pathNames[:],
		"kind":   kindNames[:],
		"queue":  queueNames[:],
		"buffer": bufferNames[:],
		"le":     nil, // histogram buckets, fixed by params.go
	}
	for name, mf := range families(t, reg) {
		reason := lossNames[:]
		if name == "rsbd_drops_total" {
			reason = dropNames[:]
		}
		labelsets := map[string]bool{}
		for _, metric := range mf.GetMetric() {
			var set []string
			for _, lp := range metric.GetLabel() {
				vals, ok := allowed[lp.GetName()]
				if lp.GetName() == "reason" {
					vals, ok = reason, true
				}
				if name == "rsbd_build_info" && (lp.GetName() == "version" || lp.GetName() == "goversion") {
					continue
				}
				if !ok || !contains(vals, lp.GetValue()) {
					t.Errorf("%s: label %s=%q not from a fixed enum", name, lp.GetName(), lp.GetValue())
				}
				set = append(set, lp.GetName()+"="+lp.GetValue())
			}
			labelsets[strings.Join(set, ",")] = true
		}
		if n := len(labelsets); n > len(dropNames) {
			t.Errorf("%s has %d series", name, n)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// value returns the value of the series of family name with label lv (or the only one).
func value(t *testing.T, reg prometheus.Gatherer, name, lv string) float64 {
	t.Helper()
	mf, ok := families(t, reg)[name]
	if !ok {
		t.Fatalf("no family %s", name)
	}
	for _, m := range mf.GetMetric() {
		if lv != "" && (len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != lv) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	t.Fatalf("no series %s{%s}", name, lv)
	return 0
}

func TestHotPathChildren(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	m.EventsIn[PathSocket].Inc()
	m.EventsIn[PathSocket].Inc()
	m.EventsOut[PathNetwork].Inc()
	m.BytesIn[PathLocal].Add(100)
	m.DatagramsOut[KindHeartbeat].Inc()
	m.LossReports[LossRetries].Inc()
	m.LostDatagrams[LossRetries].Add(7)
	m.QueueDepth[QueueDelivery].Set(3)
	m.BufferedBytes[BufferRetransmit].Set(4096)
	m.Peers.Set(2)
	m.EventSize[PathNetwork].Observe(1e6)
	m.DeliveryLatency[PathNetwork].Observe(0.01)
	for _, c := range []struct {
		name, label string
		want        float64
	}{
		{"rsbd_received_events_total", "socket", 2},
		{"rsbd_received_events_total", "network", 0},
		{"rsbd_sent_events_total", "network", 1},
		{"rsbd_received_bytes_total", "local", 100},
		{"rsbd_sent_datagrams_total", "heartbeat", 1},
		{"rsbd_loss_reports_total", "retries", 1},
		{"rsbd_lost_datagrams_total", "retries", 7},
		{"rsbd_queue_depth", "delivery", 3},
		{"rsbd_buffered_bytes", "retransmit", 4096},
		{"rsbd_peers", "", 2},
		{"rsbd_event_size_bytes", "network", 1},
		{"rsbd_delivery_latency_seconds", "network", 1},
		{"rsbd_build_info", "", 1},
	} {
		if got := value(t, reg, c.name, c.label); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.label, got, c.want)
		}
	}
}

func TestBuildInfo(t *testing.T) {
	reg := prometheus.NewRegistry()
	New(reg, WithVersion("v9.9.9"))
	labels := map[string]string{}
	for _, lp := range families(t, reg)["rsbd_build_info"].GetMetric()[0].GetLabel() {
		labels[lp.GetName()] = lp.GetValue()
	}
	if labels["version"] != "v9.9.9" || labels["goversion"] != runtime.Version() {
		t.Errorf("build info labels = %v", labels)
	}
	reg = prometheus.NewRegistry()
	New(reg)
	if v := families(t, reg)["rsbd_build_info"].GetMetric()[0].GetLabel(); len(v) != 2 {
		t.Errorf("default build info labels = %v", v)
	}
}

func TestDrops(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	m.Drop(DropSlowClient)
	m.DropN(DropSlowClient, 4)
	m.DropN(NumDropReasons, 1) // out of range: ignored
	m.Drop(DropReason(200))
	var pulled DropCounts
	pulled[DropFragmentDuplicate] = 3
	pulled[DropSlowClient] = 1
	m.AddDropSource(func(into *DropCounts) {
		for i, v := range pulled {
			into[i] += v
		}
	})
	m.AddDropSource(func(into *DropCounts) { into[DropFragmentDuplicate] += 10 })
	if got := value(t, reg, "rsbd_drops_total", "slow_client"); got != 6 {
		t.Errorf("slow_client = %v, want 6", got)
	}
	if got := value(t, reg, "rsbd_drops_total", "fragment_duplicate"); got != 13 {
		t.Errorf("fragment_duplicate = %v, want 13", got)
	}
	if n := len(families(t, reg)["rsbd_drops_total"].GetMetric()); n != int(NumDropReasons) {
		t.Errorf("drops has %d series, want %d", n, NumDropReasons)
	}
	var nilMetrics *Metrics
	nilMetrics.Drop(DropClosed) // must not panic
}

func TestDuplicateRegistrationPanics(t *testing.T) {
	reg := prometheus.NewRegistry()
	New(reg)
	defer func() {
		if recover() == nil {
			t.Error("second New on one registry did not panic")
		}
	}()
	New(reg)
}

func TestEnums(t *testing.T) {
	checkNames := func(what string, names []string) {
		seen := map[string]bool{}
		for _, n := range names {
			if !regexp.MustCompile(`^[a-z][a-z_]*[a-z]$`).MatchString(n) || seen[n] {
				t.Errorf("%s label value %q: empty, not snake_case or duplicate", what, n)
			}
			seen[n] = true
		}
	}
	checkNames("path", pathNames[:])
	checkNames("kind", kindNames[:])
	checkNames("loss", lossNames[:])
	checkNames("drop", dropNames[:])
	checkNames("queue", queueNames[:])
	checkNames("buffer", bufferNames[:])
	if PathNetwork.String() != "network" || KindGone.String() != "gone" || LossTrail.String() != "trail" ||
		DropSlowClient.String() != "slow_client" || QueueSocketOut.String() != "socket_out" || BufferReorder.String() != "reorder" {
		t.Error("enum String values changed")
	}
	if Path(9).String() != "path(9)" || DropReason(255).String() != "drop reason(255)" {
		t.Error("out-of-range String")
	}
	for r := range NumDropReasons {
		if got, ok := ParseDropReason(r.String()); !ok || got != r {
			t.Errorf("ParseDropReason(%q) = %v, %v", r, got, ok)
		}
	}
	if _, ok := ParseDropReason("nope"); ok {
		t.Error("ParseDropReason accepted an unknown reason")
	}
}

type fakeStats struct{ partial, evicted uint64 }

func TestSnapshotCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	calls := 0
	stats := fakeStats{partial: 4, evicted: 9}
	c := NewSnapshotCollector(func() fakeStats { calls++; return stats },
		SnapshotMetric[fakeStats]{
			Name: "rsbd_reassembly_partial_events", Help: "Partial events held.",
			Type: prometheus.GaugeValue, Value: func(s fakeStats) float64 { return float64(s.partial) },
		},
		SnapshotMetric[fakeStats]{
			Name: "rsbd_reassembly_evictions_total", Help: "Partial events evicted.",
			Type: prometheus.CounterValue, Labels: prometheus.Labels{"buffer": "reassembly"},
			Value: func(s fakeStats) float64 { return float64(s.evicted) },
		})
	if err := m.Register(c); err != nil {
		t.Fatal(err)
	}
	if got := value(t, reg, "rsbd_reassembly_partial_events", ""); got != 4 || calls != 1 {
		t.Errorf("partial = %v after %d snapshots", got, calls)
	}
	stats.evicted = 11
	if got := value(t, reg, "rsbd_reassembly_evictions_total", "reassembly"); got != 11 || calls != 2 {
		t.Errorf("evictions = %v after %d snapshots", got, calls)
	}
	if problems, err := testutil.GatherAndLint(reg, "rsbd_reassembly_partial_events", "rsbd_reassembly_evictions_total"); err != nil || len(problems) != 0 {
		t.Errorf("lint: %v %v", problems, err)
	}

	for _, bad := range []SnapshotMetric[int]{
		{Name: "rsbd bad name", Type: prometheus.GaugeValue},
		{Name: "other_prefix", Type: prometheus.GaugeValue},
		{Name: "rsbd_Upper", Type: prometheus.GaugeValue},
		{Name: "rsbd_count", Type: prometheus.CounterValue},
		{Name: "rsbd_level_total", Type: prometheus.GaugeValue},
		{Name: "rsbd_peers", Type: prometheus.GaugeValue}, // already a push family
	} {
		bad.Help = "x"
		bad.Value = func(int) float64 { return 0 }
		if err := m.Register(NewSnapshotCollector(func() int { return 0 }, bad)); err == nil {
			t.Errorf("collector %q (%v) registered", bad.Name, bad.Type)
		}
	}
}

// TestRefreshBeforeRead: a refresh hook runs at every scrape before any
// family is read, so a gauge it sets shows that scrape's value, never the
// one before.
func TestRefreshBeforeRead(t *testing.T) {
	reg := NewRegistry()
	m := New(reg)
	var n float64
	m.AddRefresh(func() {
		n++
		m.Peers.Set(n)
		m.QueueDepth[QueueSocketIn].Set(2 * n)
	})
	for i := 1; i <= 50; i++ {
		fams := families(t, reg) // one scrape
		peers := fams["rsbd_peers"].GetMetric()[0].GetGauge().GetValue()
		var depth float64
		for _, s := range fams["rsbd_queue_depth"].GetMetric() {
			if s.GetLabel()[0].GetValue() == "socket_in" {
				depth = s.GetGauge().GetValue()
			}
		}
		if peers != float64(i) || depth != float64(2*i) {
			t.Fatalf("scrape %d: rsbd_peers %v, socket_in depth %v; want %d, %d", i, peers, depth, i, 2*i)
		}
	}
}
