package report

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAddRatioAndGoal(t *testing.T) {
	var tb Table
	tb.Add(Row{Case: "thr", Unit: UnitMsgs, RSBD: Figure{Value: 660e3}, PeerFig: Figure{Value: 600e3}, Goal: &Goal{Op: ">=", Bound: 1.1}})
	tb.Add(Row{Case: "lat", Unit: UnitMicro, RSBD: Figure{Value: 30}, PeerFig: Figure{Value: 20}, Goal: &Goal{Op: "<=", Bound: 1.2}})
	tb.Add(Row{Case: "lost", Unit: UnitMsgs, RSBD: Figure{Value: 900e3, Failed: true, Status: "lost 3"}, PeerFig: Figure{Value: 600e3}, Goal: &Goal{Op: ">=", Bound: 1.1}})
	tb.Add(Row{Case: "nopeer", Unit: UnitMsgs, RSBD: Figure{Value: 1}})
	tb.Add(Row{Case: "peerfailed", Unit: UnitMsgs, RSBD: Figure{Value: 900e3}, PeerFig: Figure{Value: 400e3, Failed: true}, Goal: &Goal{Op: ">=", Bound: 1}})
	tb.Add(Row{Case: "bothfailed", Unit: UnitMsgs, RSBD: Figure{Failed: true}, Goal: &Goal{Op: ">=", Bound: 1}})

	if r := tb.Rows[0]; r.Ratio < 1.0999 || r.Ratio > 1.1001 || r.GoalMet == nil || !*r.GoalMet {
		t.Fatalf("throughput row: ratio %v met %v", r.Ratio, r.GoalMet)
	}
	if r := tb.Rows[1]; r.Ratio != 1.5 || *r.GoalMet {
		t.Fatalf("latency row: ratio %v met %v", r.Ratio, *r.GoalMet)
	}
	// A failed run has no ratio and never meets its goal, however fast.
	if r := tb.Rows[2]; r.Ratio != 0 || *r.GoalMet {
		t.Fatalf("failed row: ratio %v met %v", r.Ratio, *r.GoalMet)
	}
	if r := tb.Rows[3]; r.Ratio != 0 || r.GoalMet != nil {
		t.Fatalf("row without peer: ratio %v met %v", r.Ratio, r.GoalMet)
	}
	// A peer that failed or did not run leaves the goal unjudged, not
	// missed; a failed rsbd run misses it whatever the peer did.
	if r := tb.Rows[4]; r.Ratio != 0 || r.GoalMet != nil || !strings.Contains(formatGoal(r), "not judged") {
		t.Fatalf("row with a failed peer: ratio %v met %v, goal %q", r.Ratio, r.GoalMet, formatGoal(r))
	}
	if r := tb.Rows[5]; r.GoalMet == nil || *r.GoalMet || !strings.HasSuffix(formatGoal(r), "missed") {
		t.Fatalf("failed rows: met %v, goal %q", r.GoalMet, formatGoal(r))
	}
}

func TestGoalBoundaries(t *testing.T) {
	ge, le := Goal{Op: ">=", Bound: 1}, Goal{Op: "<=", Bound: 0.5}
	cases := []struct {
		g     Goal
		ratio float64
		want  bool
	}{
		{ge, 1, true}, {ge, 0.99, false}, {ge, 0, false},
		{le, 0.5, true}, {le, 0.51, false}, {le, 0, false}, {le, 0.1, true},
	}
	for _, c := range cases {
		if got := c.g.Met(c.ratio); got != c.want {
			t.Errorf("%+v.Met(%v) = %v, want %v", c.g, c.ratio, got, c.want)
		}
	}
	if ge.String() != "≥ 1×" || le.String() != "≤ 0.5×" {
		t.Fatalf("goal strings %q %q", ge.String(), le.String())
	}
}

func TestFormatting(t *testing.T) {
	sizes := map[int]string{64: "64 B", 1024: "1 KiB", 65536: "64 KiB", 1 << 20: "1 MiB", 1000: "1000 B", 0: ""}
	for n, want := range sizes {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
	counts := map[float64]string{607123: "607 k", 1.034e6: "1.03 M", 950: "950", 28600: "28.6 k", 7.5: "7.50"}
	for v, want := range counts {
		if got := FormatCount(v); got != want {
			t.Errorf("FormatCount(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestMarkdownAndJSON(t *testing.T) {
	tb := Table{Title: "t", Command: "rsbd-bench --quick", Pinning: "none"}
	tb.Add(Row{Section: "throughput", Case: "embedded p2p", Size: 1024, Metric: "msgs/s", Unit: UnitMsgs,
		RSBD: Figure{Value: 500e3, MBps: 512}, Peer: "Cyclone DDS", PeerFig: Figure{Value: 434e3, MBps: 444, Note: "a|b"},
		Goal: &Goal{Op: ">=", Bound: 1.1}})
	tb.Add(Row{Section: "latency", Case: "one daemon", Size: 64, Metric: "RTT p50", Unit: UnitMicro,
		RSBD: Figure{Failed: true, Status: "lost 2 of 100"}, Peer: "NATS", PeerFig: Figure{Value: 114}})
	md := tb.Markdown()
	for _, want := range []string{
		"| throughput | embedded p2p | 1 KiB | msgs/s | 500 k msg/s · 512 MB/s | Cyclone DDS | 434 k msg/s · 444 MB/s | 1.15 | ≥ 1.1× **met** |",
		"Cyclone DDS: a\\|b",
		"| latency | one daemon | 64 B | RTT p50 | FAIL | NATS | 114 µs | – |",
		"rsbd: lost 2 of 100",
		"`rsbd-bench --quick`",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	b, err := tb.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Table
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Rows) != 2 || back.Rows[0].Ratio != tb.Rows[0].Ratio || !back.Rows[1].RSBD.Failed {
		t.Fatalf("JSON round trip lost data: %s", b)
	}
}
