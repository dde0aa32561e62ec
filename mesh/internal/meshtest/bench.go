package meshtest

import (
	"context"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/internal/rttstat"
	"github.com/rsbd/rsbd/node"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// Sizes are the payload sizes the benchmarks measure.
var Sizes = []struct {
	Name string
	N    int
}{{"64B", 64}, {"1KiB", 1024}}

// Dial returns a socket client of n, closed at the end of the benchmark.
func Dial(b *testing.B, n *node.Node) *client.Bus {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	bus, err := client.Dial(ctx, "socket://"+n.SocketAddr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bus.Close() })
	return bus
}

// ReaderReady returns a reader on sc of bus once events published by
// publish reach it (the node learns the reader's interest
// asynchronously), with the probes that reached it read away.
func ReaderReady(b *testing.B, bus *client.Bus, sc string, publish func()) *client.Reader {
	b.Helper()
	rd, err := bus.NewReader(scope.MustParse(sc))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rd.Close() })
	for range probes {
		publish()
		ctx, cancel := context.WithTimeout(context.Background(), probeWait)
		_, err := rd.Read(ctx)
		cancel()
		if err == nil {
			Drain(rd)
			return rd
		}
	}
	b.Fatal("reader never reached")
	return nil
}

// Drain reads what rd holds queued.
func Drain(rd *client.Reader) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), probeWait)
		_, err := rd.Read(ctx)
		cancel()
		if err != nil {
			return
		}
	}
}

// Read returns a receive function for Measure: the next event of rd.
func Read(b *testing.B, rd *client.Reader) func() {
	return func() {
		if _, err := rd.Read(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// Measure times send until recv returns, once an operation of b, and
// reports the median and 99th percentile in microseconds and the
// sequential rate, in rateUnit ("msgs/s", "events/s"); ns/op is
// meaningless here and reported as 0.
func Measure(b *testing.B, send, recv func(), rateUnit string) {
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		send()
		recv()
		lat = append(lat, time.Since(t0))
	}
	if len(lat) == 0 {
		return
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	rttstat.Report(b, lat)
	b.ReportMetric(float64(len(lat))/sum.Seconds(), rateUnit)
	b.ReportMetric(0, "ns/op")
}

// Publisher returns a send function for Measure: it publishes one event
// of schema with data on sc through an informer of bus.
func Publisher(b *testing.B, bus *client.Bus, sc, schema string, data []byte) func() {
	b.Helper()
	inf, err := bus.NewInformer(scope.MustParse(sc))
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		ev := &client.Event{Event: notification.Event{WireSchema: schema, Data: data}}
		if err := inf.PublishEvent(context.Background(), ev); err != nil {
			b.Fatal(err)
		}
	}
}
