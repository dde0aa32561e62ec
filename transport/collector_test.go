package transport

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rsbd/rsbd/metrics"
)

// TestCollectorAndDrops: the collector exports the readers' counters from
// the snapshot, and AddDrops files the transport's drops under their
// reasons.
func TestCollectorAndDrops(t *testing.T) {
	st := Stats{SpinWaits: 7, SpinHits: 5, SpinSkips: 6, Own: 2, SendErrors: 1, KernelDrops: 4, Oversize: 3}
	c := Collector(func() Stats { return st })
	if n := testutil.CollectAndCount(c); n != 6 {
		t.Fatalf("%d series, want 6", n)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "rsbd_spin_waits_total" && mf.GetMetric()[0].GetCounter().GetValue() != 7 {
			t.Fatalf("spin waits %v, want 7", mf.GetMetric()[0].GetCounter().GetValue())
		}
	}
	var dc metrics.DropCounts
	st.AddDrops(&dc)
	if dc[metrics.DropSendError] != 1 || dc[metrics.DropSocketBuffer] != 4 || dc[metrics.DropDatagramTooLarge] != 3 {
		t.Fatalf("drops %v", dc)
	}
}
