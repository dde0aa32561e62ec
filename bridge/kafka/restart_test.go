package kafka_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/internal/testutil"
)

// seqs counts the distinct seq headers of binary records and checks that
// the first appearances come in order.
func seqs(t *testing.T, recs []*kgo.Record) map[int]int {
	t.Helper()
	seen := map[int]int{}
	next := 0
	for _, r := range recs {
		n, err := strconv.Atoi(header(r, "ce_seq"))
		if err != nil {
			t.Fatalf("record without seq: %+v", r)
		}
		if seen[n] == 0 && n != next {
			t.Fatalf("seq %d first seen where %d was due", n, next)
		}
		if seen[n] == 0 {
			next++
		}
		seen[n]++
	}
	return seen
}

func TestOutBrokerRestartLosesNothing(t *testing.T) {
	k := startCluster(t)
	bus := bridgetest.Bus(t)
	m, _ := bridge.NewMetrics(nil)
	cfg := k.config("restart-out", bridge.FormatBinary)
	cfg.Out = bridge.Route{Scope: "/r/", Address: "restart"}
	b := bridgetest.Run(t, bus, cfg, m)
	inf := bridgetest.Informer(t, bus, "/r/")
	const half = 100
	bridgetest.PublishAcrossRestart(t, inf, b, m, "restart-out", half, k.stop, k.start)
	testutil.WaitFor(t, bridgetest.Timeout, "second half acknowledged", func() bool {
		return bridgetest.Value(m.Messages, "restart-out", bridge.DirOut) == 2*half
	})
	recs := k.consume(t, "restart", 2*half)
	got := seqs(t, recs)
	if len(got) != 2*half {
		t.Fatalf("%d distinct events at the broker, want %d", len(got), 2*half)
	}
	t.Logf("%d records for %d events across the restart, %v retries", len(recs), len(got),
		bridgetest.Value(m.Retries, "restart-out", bridge.DirOut))
	if err := b.Ready(); err != nil {
		t.Errorf("not ready after the restart: %v", err)
	}
}

func TestInBrokerRestartLosesNothing(t *testing.T) {
	k := startCluster(t)
	bus := bridgetest.Bus(t)
	m, _ := bridge.NewMetrics(nil)
	cfg := k.config("restart-in", bridge.FormatBinary)
	cfg.In = bridge.Route{Scope: "/ri/", Address: "restart-in"}
	rd := bridgetest.Reader(t, bus, "/ri/")
	const half = 100
	batch := func(from int) []*kgo.Record {
		var recs []*kgo.Record
		for i := from; i < from+half; i++ {
			recs = append(recs, record(t, bridge.FormatBinary, "restart-in", bridgetest.Event(i, 64)))
		}
		return recs
	}
	k.produce(t, batch(0)...)
	bridgetest.Run(t, bus, cfg, m)
	seen := map[int]int{}
	read := func(want int) {
		for len(seen) < want {
			_, e := bridgetest.ReadCE(t, rd)
			seen[bridgetest.Seq(e)]++
		}
	}
	read(half)
	k.stop()
	k.start()
	k.produce(t, batch(half)...)
	read(2 * half)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for {
		ev, err := rd.Read(ctx)
		if err != nil {
			break
		}
		e, _ := bridge.FromBus(&ev.Event, "")
		seen[bridgetest.Seq(e)]++
	}
	for i := range 2 * half {
		if seen[i] == 0 {
			t.Fatalf("event %d lost", i)
		}
	}
	t.Logf("%d distinct events on the bus across the restart, %v reconnects", len(seen),
		bridgetest.Value(m.Reconnects, "restart-in", bridge.DirIn))
}
