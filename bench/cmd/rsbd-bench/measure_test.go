package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/bench/internal/agent"
	"github.com/rsbd/rsbd/bench/internal/report"
	"github.com/rsbd/rsbd/bench/internal/workload"
)

func TestThrFigure(t *testing.T) {
	ok := thrFigure(workload.RecvResult{N: 100, Received: 100, Rate: 1000}, workload.SendResult{Elapsed: time.Second}, 1024, 150)
	if ok.Failed || ok.Value != 1000 || ok.MBps != 1.024 || !strings.Contains(ok.Note, "host CPU 150%") {
		t.Fatalf("clean run: %+v", ok)
	}
	lost := thrFigure(workload.RecvResult{N: 100, Received: 97, Lost: 3, WarmLost: 1, Rate: 5000}, workload.SendResult{}, 64, 0)
	if !lost.Failed || !strings.Contains(lost.Status, "lost 3 of 100") || !strings.Contains(lost.Status, "1 warm-up") {
		t.Fatalf("lossy run: %+v", lost)
	}
	slow := thrFigure(workload.RecvResult{N: 100, Received: 50, Lost: 50, TimedOut: true, Rate: 10}, workload.SendResult{}, 64, 0)
	if !slow.Failed || !strings.Contains(slow.Status, "too slow") {
		t.Fatalf("timed-out run: %+v", slow)
	}
	reported := thrFigure(workload.RecvResult{N: 10, Received: 10, LossReports: 2, Rate: 10}, workload.SendResult{}, 64, 0)
	if !reported.Failed || !strings.Contains(reported.Status, "reported 2 lost") {
		t.Fatalf("run with loss reports: %+v", reported)
	}
	misrouted := thrFigure(workload.RecvResult{N: 10, Received: 10, Misrouted: 1, Rate: 10}, workload.SendResult{}, 64, 0)
	if !misrouted.Failed || !strings.Contains(misrouted.Status, "misrouted 1") {
		t.Fatalf("run with a misrouted event: %+v", misrouted)
	}
}

func TestCodeChanged(t *testing.T) {
	for status, want := range map[string]bool{
		"":                                 false,
		" M docs/BENCHMARKS.md\n":          false,
		" M README.md\n M docs/X.md\n":     false,
		" M docs/BENCHMARKS.md\n M a.go\n": true,
		"R  old.md -> new.go\n":            true,
	} {
		if got := codeChanged(status); got != want {
			t.Errorf("codeChanged(%q) = %v", status, got)
		}
	}
}

func TestDropDelta(t *testing.T) {
	before := []map[string]float64{{"rsbd_drops_total{reason=slow_client}": 5}, nil}
	after := []map[string]float64{
		{"rsbd_drops_total{reason=slow_client}": 12, "rsbd_drops_total{reason=other}": 0},
		{"rsbd_lost_datagrams_total": 3, "rsbd_sent_datagrams_total{kind=heartbeat}": 9, "rsbd_sent_datagrams_total{kind=data}": 4},
	}
	got := dropDelta([]string{"daemon", "sub"}, before, after)
	want := "daemon drops_total{reason=slow_client} +7, sub lost_datagrams_total +3, sub sent_datagrams_total{kind=data} +4"
	if got != want {
		t.Fatalf("dropDelta = %q, want %q", got, want)
	}
}

func TestWindowFor(t *testing.T) {
	if AckEvery := workload.AckEvery(1000); AckEvery != 250 {
		t.Errorf("AckEvery(1000) = %d", AckEvery)
	}
	for size, want := range map[int]int{64: 1000, 1024: 1000, 65536: 256, 1 << 20: 16, 64 << 20: 1} {
		if got := windowFor(size); got != want {
			t.Errorf("windowFor(%d) = %d, want %d", size, got, want)
		}
	}
}

// TestMedianRun: the median run is the figure, its note lists every run;
// a failed run fails the step.
func TestMedianRun(t *testing.T) {
	runs := []report.Figure{{Value: 3e6, Note: "c"}, {Value: 1e6, Note: "a"}, {Value: 2e6, Note: "b"}}
	got := medianRun(runs)
	if got.Value != 2e6 || !strings.Contains(got.Note, "median of 3 runs") || !strings.HasSuffix(got.Note, "b") {
		t.Fatalf("median %v %q", got.Value, got.Note)
	}
	if runs[0].Value != 3e6 {
		t.Fatal("medianRun reordered its input")
	}
	runs[1] = report.Figure{Failed: true, Status: "lost 3 events"}
	if got := medianRun(runs); !got.Failed || got.Status != "lost 3 events" {
		t.Fatalf("with a failed run: %+v", got)
	}
	if got := medianRun(runs[:1]); got.Value != 3e6 || got.Note != "c" {
		t.Fatalf("one run: %+v", got)
	}
}

func TestProfiled(t *testing.T) {
	d, pub, sub := &agent.Process{}, &agent.Process{}, &agent.Process{}
	run := thrRun{send: pub, recv: sub, procs: []*agent.Process{d}}
	if got := profiled(run, false); len(got) != 1 || got[0] != d {
		t.Fatalf("without clients: %v, want the daemon alone", got)
	}
	if got := profiled(run, true); len(got) != 3 || got[0] != d || got[1] != pub || got[2] != sub {
		t.Fatalf("with clients: %v, want daemon, publisher, subscriber", got)
	}
	// A daemon that is also the receiver is profiled once.
	run = thrRun{send: pub, recv: d, procs: []*agent.Process{d}}
	if got := profiled(run, true); len(got) != 2 || got[0] != d || got[1] != pub {
		t.Fatalf("receiving daemon: %v, want daemon and publisher", got)
	}
	// A peer's run (no rsbd process): its clients, with clients alone.
	if got := profiled(thrRun{send: pub, recv: sub}, false); len(got) != 0 {
		t.Fatalf("peer run without clients: %v, want none", got)
	}
	if got := profiled(thrRun{send: pub, recv: sub}, true); len(got) != 2 || got[0] != pub || got[1] != sub {
		t.Fatalf("peer run with clients: %v, want publisher, subscriber", got)
	}
}

// TestNATSMuxRows: the rsbd layouts of many listeners over one connection
// and over spreadConns get a NATS row of the same layout, for context.
func TestNATSMuxRows(t *testing.T) {
	r := &runner{p: fullPlan(), figs: map[string]report.Figure{}}
	r.figs[sharedKey(1000)] = report.Figure{Value: 2e6}
	r.figs[spreadKey(1000)] = report.Figure{Value: 1.5e6}
	r.figs[natsMuxKey(1000, 1)] = report.Figure{Value: 1e6}
	r.figs[natsMuxKey(1000, 10)] = report.Figure{Value: 0.5e6}
	var got []report.Row
	r.scalingRows(func(row report.Row, rsbdKey, peerKey string) {
		if strings.Contains(row.Case, "NATS subjects") {
			row.RSBD, row.PeerFig = r.figs[rsbdKey], r.figs[peerKey]
			got = append(got, row)
		}
	})
	if len(got) != 2 {
		t.Fatalf("%d context rows, want 2: %+v", len(got), got)
	}
	for i, want := range []struct {
		conns      int
		rsbd, nats float64
	}{{1, 2e6, 1e6}, {10, 1.5e6, 0.5e6}} {
		row := got[i]
		if !strings.Contains(row.Case, fmt.Sprintf("over %d connection", want.conns)) || row.RSBD.Value != want.rsbd || row.PeerFig.Value != want.nats || row.Goal != nil {
			t.Errorf("row %d: %+v", i, row)
		}
	}
}
