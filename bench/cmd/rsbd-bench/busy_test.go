package main

import (
	"os"
	"testing"
)

// TestStageSelection: a full run runs every stage in full and the busy
// series; --only busy alone runs every stage but scaling for its round
// trips only; a stage named beside busy runs in full; --latency-only keeps
// only the round trips of what runs.
func TestStageSelection(t *testing.T) {
	for _, c := range []struct {
		only     string
		latOnly  bool
		stage    string
		wants    bool
		latency  bool
		busySeen bool
	}{
		{"", false, "embedded", true, false, true},
		{"", false, "scaling", true, false, true},
		{"busy", false, "embedded", true, true, true},
		{"busy", false, "scaling", false, true, true},
		{"embedded,busy", false, "embedded", true, false, true},
		{"embedded,busy", false, "nats", false, true, true},
		{"embedded", false, "embedded", true, false, false},
		{"embedded", true, "embedded", true, true, false},
	} {
		o := options{only: c.only, latencyOnly: c.latOnly}
		r, err := newRunner(o)
		if err != nil {
			t.Fatal(err)
		}
		r.close()
		os.Remove(r.logPath)
		if r.wants(c.stage) != c.wants || r.latencyOnly(c.stage) != c.latency || r.wantsBusy() != c.busySeen {
			t.Errorf("--only %q --latency-only=%v, stage %s: wants %v latency-only %v busy %v; want %v %v %v", c.only, c.latOnly, c.stage,
				r.wants(c.stage), r.latencyOnly(c.stage), r.wantsBusy(), c.wants, c.latency, c.busySeen)
		}
	}
}
