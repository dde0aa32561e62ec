package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/metrics"
)

// meshCollector exports the counters every gateway listener shares as
// the rsbd_gateway_* families, each series labelled with the listener's
// protocol and, for the counts by reason, with a reason from the
// listener's fixed set. Every listener registers one, so the families
// have the same help and labels whatever the protocol.
func meshCollector(c *mesh.Counters) prometheus.Collector {
	type st = mesh.Stats
	proto := c.Protocol()
	labels := func(kv ...string) prometheus.Labels {
		l := prometheus.Labels{"protocol": proto}
		for i := 0; i+1 < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
		return l
	}
	ms := []metrics.SnapshotMetric[st]{
		{Name: "rsbd_gateway_published_events_total", Help: "Events a gateway listener published to the bus.",
			Type: prometheus.CounterValue, Labels: labels(), Value: func(s st) float64 { return float64(s.Published) }},
		{Name: "rsbd_gateway_delivered_events_total", Help: "Events a gateway listener wrote or queued to its clients.",
			Type: prometheus.CounterValue, Labels: labels(), Value: func(s st) float64 { return float64(s.Delivered) }},
		{Name: "rsbd_gateway_subscribers", Help: "Subscriptions a gateway listener has open.",
			Type: prometheus.GaugeValue, Labels: labels(), Value: func(s st) float64 { return float64(s.Subscribers) }},
		{Name: "rsbd_gateway_connections", Help: "Client connections a connection-oriented gateway listener has open.",
			Type: prometheus.GaugeValue, Labels: labels(), Value: func(s st) float64 { return float64(s.Connections) }},
	}
	rs := c.Reasons()
	for _, reason := range rs.Dropped {
		ms = append(ms, metrics.SnapshotMetric[st]{Name: "rsbd_gateway_dropped_events_total",
			Help: "Events a gateway listener did not deliver or publish, by reason.", Type: prometheus.CounterValue,
			Labels: labels("reason", reason), Value: func(s st) float64 { return float64(s.Dropped[reason]) }})
	}
	for _, reason := range rs.Rejected {
		ms = append(ms, metrics.SnapshotMetric[st]{Name: "rsbd_gateway_rejected_total",
			Help: "Requests and messages a gateway listener refused, by reason.", Type: prometheus.CounterValue,
			Labels: labels("reason", reason), Value: func(s st) float64 { return float64(s.Rejected[reason]) }})
	}
	for _, reason := range rs.Closed {
		ms = append(ms, metrics.SnapshotMetric[st]{Name: "rsbd_gateway_closed_connections_total",
			Help: "Client connections a gateway listener closed, by reason.", Type: prometheus.CounterValue,
			Labels: labels("reason", reason), Value: func(s st) float64 { return float64(s.Closed[reason]) }})
	}
	return metrics.NewSnapshotCollector(c.Stats, ms...)
}
