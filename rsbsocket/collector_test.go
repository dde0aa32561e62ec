package rsbsocket

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/metrics"
)

// TestCollectorAndDrops: the collector exports every counter and every
// disconnect reason from the snapshot, and AddDrops files the server's
// drops under rsbd_drops_total's reasons.
func TestCollectorAndDrops(t *testing.T) {
	var st Stats
	st.Waits, st.ConnsRefused, st.ConnsNotAllowed = 3, 2, 6
	st.Disconnects[0] = 5
	st.Drops[DropQueueFull], st.Drops[DropTimeout], st.Drops[DropMalformed], st.Drops[DropHandshake] = 1, 2, 4, 8
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(Collector(func() Stats { return st })); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	series := 0
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			series++
			got[mf.GetName()] += m.GetCounter().GetValue()
		}
	}
	if want := 11 + int(NumDisconnectReasons); series != want {
		t.Fatalf("%d series, want %d", series, want)
	}
	if got["rsbd_socket_publisher_waits_total"] != 3 || got["rsbd_socket_connections_refused_total"] != 2 ||
		got["rsbd_socket_disconnects_total"] != 5 || got["rsbd_socket_refused_total"] != 6+2 {
		t.Fatalf("values not read from the snapshot: %v", got)
	}
	var dc metrics.DropCounts
	st.AddDrops(&dc)
	if dc[metrics.DropSlowClient] != 3 || dc[metrics.DropDecodeError] != 4 || dc[metrics.DropBadHandshake] != 8 {
		t.Fatalf("drops %v", dc)
	}
}
