package e2e

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
)

// families are the metric families the daemon must expose, with their type.
var families = map[string]string{
	"rsbd_received_events_total":             "counter",
	"rsbd_sent_events_total":                 "counter",
	"rsbd_received_bytes_total":              "counter",
	"rsbd_sent_bytes_total":                  "counter",
	"rsbd_received_datagrams_total":          "counter",
	"rsbd_sent_datagrams_total":              "counter",
	"rsbd_nacked_datagrams_total":            "counter",
	"rsbd_nacks_received_total":              "counter",
	"rsbd_nacks_suppressed_total":            "counter",
	"rsbd_repairs_sent_total":                "counter",
	"rsbd_repairs_received_total":            "counter",
	"rsbd_fragment_buffers_recycled_total":   "counter",
	"rsbd_loss_reports_total":                "counter",
	"rsbd_lost_datagrams_total":              "counter",
	"rsbd_drops_total":                       "counter",
	"rsbd_peers":                             "gauge",
	"rsbd_joined_multicast_groups":           "gauge",
	"rsbd_socket_connections":                "gauge",
	"rsbd_socket_accepted_connections_total": "counter",
	"rsbd_queue_depth":                       "gauge",
	"rsbd_buffered_bytes":                    "gauge",
	"rsbd_event_size_bytes":                  "histogram",
	"rsbd_delivery_latency_seconds":          "histogram",
	"rsbd_build_info":                        "gauge",
}

// series the issue names explicitly: events and bytes per path, datagrams
// by kind (heartbeats, NACKs), drops by the reasons it lists.
var series = []string{
	`rsbd_received_events_total{path="socket"}`, `rsbd_received_events_total{path="network"}`,
	`rsbd_sent_events_total{path="local"}`, `rsbd_sent_bytes_total{path="network"}`,
	`rsbd_sent_datagrams_total{kind="heartbeat"}`, `rsbd_received_datagrams_total{kind="nack"}`,
	`rsbd_drops_total{reason="reassembly_timeout"}`, `rsbd_drops_total{reason="slow_client"}`,
	`rsbd_drops_total{reason="decode_error"}`, `rsbd_drops_total{reason="frame_too_large"}`,
	`rsbd_drops_total{reason="bad_handshake"}`, `rsbd_drops_total{reason="queue_full"}`,
	`rsbd_queue_depth{queue="socket_out"}`, `rsbd_buffered_bytes{buffer="retransmit"}`,
}

// TestMetricsAndHealth: /metrics exposes the families rsbd promises,
// labelled only by fixed enums; /livez and /readyz answer 200.
func TestMetricsAndHealth(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	d := c.start("D", opts{})
	for _, path := range []string{"/livez", "/readyz"} {
		if code, body, err := d.Get(path); err != nil || code != http.StatusOK || strings.TrimSpace(body) != "ok" {
			t.Errorf("%s: %d %q %v", path, code, body, err)
		}
	}
	l := dial(t, d, "D/listener")
	l.listen("/scope/with/a/name/")
	_, body, err := d.Get("/metrics")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) (\S+)$`).FindAllStringSubmatch(body, -1) {
		types[m[1]] = m[2]
	}
	for name, typ := range families {
		if types[name] != typ {
			t.Errorf("family %s: type %q, want %q", name, types[name], typ)
		}
	}
	m := d.Metrics()
	for _, s := range series {
		if _, ok := m[s]; !ok {
			t.Errorf("series %s missing", s)
		}
	}
	if strings.Contains(body, "/scope/") {
		t.Error("a scope appears in /metrics: label values must come from fixed sets")
	}
	if code, _, _ := d.Get("/nothing-here"); code != http.StatusNotFound {
		t.Errorf("unknown path answered %d", code)
	}
}

// TestSIGTERM: a daemon with a client and a peer exits 0 within a bounded
// time after SIGTERM, closes its client's connection in order and leaves
// the cluster (the peer sees a departure, not a failure).
func TestSIGTERM(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("A", opts{})
	b := c.start("B", opts{})
	c.waitPeers(20 * time.Second)
	cl := dial(t, b, "B/client")
	cl.listen("/t/")
	pub := dial(t, a, "A/pub")
	waitRoute(t, 20*time.Second, pub, "/t/", cl)
	code, took, ok := b.Terminate()
	if !ok {
		t.Fatalf("no exit within %v of SIGTERM", testutil.DaemonStopTimeout)
	}
	if code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
	if stopped, err := cl.stopped(10 * time.Second); !stopped || err != io.EOF {
		t.Errorf("client connection not closed in order: stopped=%v err=%v", stopped, err)
	}
	testutil.WaitFor(t, 10*time.Second, "A seeing B leave", func() bool {
		return a.Metric("rsbd_peers") == 0 && a.Logged(`"msg":"peer gone"`, `"name":"B"`, `"kind":"leave"`)
	})
	t.Logf("SIGTERM to exit 0 in %v", took.Round(time.Millisecond))
}
