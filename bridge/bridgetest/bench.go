package bridgetest

import (
	"context"
	"testing"
	"time"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

// BenchSize is the data size of the benchmarks' events.
const BenchSize = 1024

// BenchOut measures the outbound route of cfg: b.N events of BenchSize
// published on its scope until the broker acknowledged them all. The queue
// holds them all, so none is dropped.
func BenchOut(b *testing.B, bus *client.Bus, cfg bridge.Config) {
	b.Helper()
	m, _ := bridge.NewMetrics(nil)
	cfg.QueueLen = b.N + 16
	cfg.QueueBytes = int64(b.N+16) * 4 * BenchSize
	Run(b, bus, cfg, m)
	inf := Informer(b, bus, cfg.Out.Scope)
	events := make([]*client.Event, b.N)
	for i := range events {
		ev, err := bridge.ToBus(Event(i, BenchSize), inf.Scope(), "")
		if err != nil {
			b.Fatal(err)
		}
		events[i] = &client.Event{Event: *ev}
	}
	b.SetBytes(BenchSize)
	b.ResetTimer()
	start := time.Now()
	for _, ev := range events {
		if err := inf.PublishEvent(context.Background(), ev); err != nil {
			b.Fatal(err)
		}
	}
	testutil.WaitFor(b, 10*time.Minute, "all acknowledged", func() bool {
		return Value(m.Messages, cfg.Name, bridge.DirOut) >= float64(b.N)
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
	if d := Value(m.Drops, cfg.Name, bridge.DirOut); d > 0 {
		b.Fatalf("%v events dropped", d)
	}
}

// BenchIn measures the inbound route of cfg: fill writes b.N events of
// BenchSize to the broker first, then the bridge starts and the benchmark
// ends when they are all on the bus.
func BenchIn(b *testing.B, bus *client.Bus, cfg bridge.Config, fill func(n int)) {
	b.Helper()
	fill(b.N)
	rd, err := bus.NewReader(scope.MustParse(cfg.In.Scope), client.WithQueue(b.N+16, client.DropNewest))
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	b.SetBytes(BenchSize)
	b.ResetTimer()
	start := time.Now()
	m, _ := bridge.NewMetrics(nil)
	Run(b, bus, cfg, m)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for range b.N {
		if _, err := rd.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// Direct reports the rate of the broker's own client doing the same work
// in one call of do (n events).
func Direct(b *testing.B, do func(n int)) {
	b.Helper()
	b.SetBytes(BenchSize)
	b.ResetTimer()
	start := time.Now()
	do(b.N)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}
