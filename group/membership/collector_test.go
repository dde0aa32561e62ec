package membership

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestCollectorExportsEveryFamilyValue: the collector exports one series
// per labelled value of every family, each read from the snapshot.
func TestCollectorExportsEveryFamilyValue(t *testing.T) {
	st := Stats{StatesApplied: 3, PushErrors: 2, Conflicts: 1}
	reg := prometheus.NewRegistry()
	if err := reg.Register(Collector(func() Stats { return st })); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{}
	for _, mf := range mfs {
		got[mf.GetName()] = map[string]float64{}
		for _, m := range mf.GetMetric() {
			got[mf.GetName()][label(m)] = m.GetCounter().GetValue()
		}
	}
	for _, f := range Families() {
		if len(got[f.Name]) != len(f.Values) {
			t.Fatalf("%s: %v, want %d values", f.Name, got[f.Name], len(f.Values))
		}
		for _, v := range f.Values {
			if g, want := got[f.Name][v.Label], float64(v.Value(st)); g != want {
				t.Errorf("%s{%s=%q} = %v, want %v", f.Name, f.Label, v.Label, g, want)
			}
		}
	}
	if got["rsbd_membership_states_total"]["applied"] != 3 || got["rsbd_membership_name_conflicts_total"][""] != 1 {
		t.Fatalf("values not read from the snapshot: %v", got)
	}
}

func label(m *dto.Metric) string {
	for _, l := range m.GetLabel() {
		return l.GetValue()
	}
	return ""
}
