package main

import (
	"strings"
	"testing"

	"github.com/rsbd/rsbd/bench/internal/report"
)

// TestReferenceRows: the raw references get their rows next to the peers
// they explain, and the relay rows carry NATS as a multiple of the relay.
func TestReferenceRows(t *testing.T) {
	r := &runner{p: quickPlan(), figs: map[string]report.Figure{}}
	for _, s := range latencySizes {
		r.set(p50Key(sysEmbedded, s), report.Figure{Value: 40})
		r.set(p50Key(sysMcast, s), report.Figure{Value: 20})
		r.set(p50Key(sysDaemon, s), report.Figure{Value: 60})
		r.set(p99Key(sysDaemon, s), report.Figure{Value: 120})
		r.set(p50Key(sysRelay, s), report.Figure{Value: 50, Note: "3000 round trips"})
		r.set(p99Key(sysRelay, s), report.Figure{Value: 100})
		r.set(p50Key(sysNATS, s), report.Figure{Value: 100})
		r.set(p99Key(sysNATS, s), report.Figure{Failed: true, Status: "lost"})
	}
	var mc, relay50, relay99 *report.Row
	rows := r.table(r.start).Rows
	for i := range rows {
		row := &rows[i]
		switch {
		case row.Size != 64:
		case row.Peer == peerMC:
			mc = row
		case row.Peer == peerTCP && row.Metric == "RTT p50":
			relay50 = row
		case row.Peer == peerTCP && row.Metric == "RTT p99":
			relay99 = row
		}
	}
	if mc == nil || mc.Ratio != 2 || mc.Case != "embedded, peer to peer" {
		t.Fatalf("multicast row: %+v", mc)
	}
	if relay50 == nil || relay50.Ratio != 1.2 || relay50.PeerFig.Note != "3000 round trips; NATS 100 µs = 2.00× this" {
		t.Fatalf("relay p50 row: %+v", relay50)
	}
	// A failed NATS figure gives no multiple.
	if relay99 == nil || relay99.Ratio != 1.2 || strings.Contains(relay99.PeerFig.Note, "NATS") {
		t.Fatalf("relay p99 row: %+v", relay99)
	}
}
