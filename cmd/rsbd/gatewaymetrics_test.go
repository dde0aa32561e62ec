package main

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rsbd/rsbd/mesh"
)

// TestMeshCollector checks two listeners' counters register side by side
// in one registry, lint clean, each series labelled with its protocol.
func TestMeshCollector(t *testing.T) {
	a := mesh.NewCounters("cloudevents", mesh.Reasons{Dropped: []string{"queue_full"}, Rejected: []string{"malformed"}})
	b := mesh.NewCounters("meshmessage", mesh.Reasons{Dropped: []string{"queue_full"}, Closed: []string{"heartbeat"}})
	a.AddPublished(3)
	b.AddDropped("queue_full", 2)
	b.Closed("heartbeat")
	b.AddConnections(1)
	reg := prometheus.NewPedanticRegistry()
	for _, c := range []*mesh.Counters{a, b} {
		if err := reg.Register(meshCollector(c)); err != nil {
			t.Fatal(err)
		}
	}
	if problems, err := promtest.GatherAndLint(reg); err != nil || len(problems) != 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}
	want := `
# HELP rsbd_gateway_dropped_events_total Events a gateway listener did not deliver or publish, by reason.
# TYPE rsbd_gateway_dropped_events_total counter
rsbd_gateway_dropped_events_total{protocol="cloudevents",reason="other"} 0
rsbd_gateway_dropped_events_total{protocol="cloudevents",reason="queue_full"} 0
rsbd_gateway_dropped_events_total{protocol="meshmessage",reason="other"} 0
rsbd_gateway_dropped_events_total{protocol="meshmessage",reason="queue_full"} 2
# HELP rsbd_gateway_published_events_total Events a gateway listener published to the bus.
# TYPE rsbd_gateway_published_events_total counter
rsbd_gateway_published_events_total{protocol="cloudevents"} 3
rsbd_gateway_published_events_total{protocol="meshmessage"} 0
# HELP rsbd_gateway_connections Client connections a connection-oriented gateway listener has open.
# TYPE rsbd_gateway_connections gauge
rsbd_gateway_connections{protocol="cloudevents"} 0
rsbd_gateway_connections{protocol="meshmessage"} 1
# HELP rsbd_gateway_closed_connections_total Client connections a gateway listener closed, by reason.
# TYPE rsbd_gateway_closed_connections_total counter
rsbd_gateway_closed_connections_total{protocol="cloudevents",reason="other"} 0
rsbd_gateway_closed_connections_total{protocol="meshmessage",reason="heartbeat"} 1
rsbd_gateway_closed_connections_total{protocol="meshmessage",reason="other"} 0
`
	if err := promtest.GatherAndCompare(reg, strings.NewReader(want), "rsbd_gateway_dropped_events_total",
		"rsbd_gateway_published_events_total", "rsbd_gateway_connections", "rsbd_gateway_closed_connections_total"); err != nil {
		t.Fatal(err)
	}
}
