package nats_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
)

var benchRun atomic.Int64

// benchServer starts one nats-server with JetStream for a benchmark.
func benchServer(b *testing.B) *bridgetest.Server {
	return bridgetest.StartServer(b, "nats-server", "nats-server", func(port, dir string) []string {
		return []string{"-a", "127.0.0.1", "-p", port, "-js", "-sd", dir}
	})
}

// fill publishes n binary events of BenchSize to subject through
// JetStream, every one acknowledged, in batches of 256.
func fill(b *testing.B, s *bridgetest.Server, subject string, n int) {
	nc, err := nats.Connect("nats://" + s.Addr())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	name := "RSBD_" + subject
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject}, Storage: jetstream.FileStorage}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i += 256 {
		var fs []jetstream.PubAckFuture
		for j := i; j < min(n, i+256); j++ {
			f, err := js.PublishMsgAsync(msg(nil, bridge.FormatBinary, subject, bridgetest.Event(j, bridgetest.BenchSize)))
			if err != nil {
				b.Fatal(err)
			}
			fs = append(fs, f)
		}
		for _, f := range fs {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkOut: bus → NATS JetStream through the bridge, beside nats.go
// publishing the same messages directly with their acknowledgements.
func BenchmarkOut(b *testing.B) {
	b.Run("bridge", func(b *testing.B) {
		s := benchServer(b)
		cfg := config(s, "bench-out", bridge.FormatBinary, true)
		cfg.Out = bridge.Route{Scope: "/bench/", Address: fmt.Sprintf("bench%d", benchRun.Add(1))}
		bridgetest.BenchOut(b, bridgetest.Bus(b), cfg)
	})
	b.Run("direct", func(b *testing.B) {
		s := benchServer(b)
		subject := fmt.Sprintf("bench%d", benchRun.Add(1))
		bridgetest.Direct(b, func(n int) { fill(b, s, subject, n) })
	})
}

// BenchmarkIn: NATS JetStream → bus through the bridge, beside a nats.go
// pull consumer fetching and acknowledging the same messages directly.
func BenchmarkIn(b *testing.B) {
	b.Run("bridge", func(b *testing.B) {
		s := benchServer(b)
		cfg := config(s, "bench-in", bridge.FormatBinary, true)
		cfg.In = bridge.Route{Scope: "/bench/", Address: fmt.Sprintf("bench%d", benchRun.Add(1))}
		bridgetest.BenchIn(b, bridgetest.Bus(b), cfg, func(n int) { fill(b, s, cfg.In.Address, n) })
	})
	b.Run("direct", func(b *testing.B) {
		s := benchServer(b)
		subject := fmt.Sprintf("bench%d", benchRun.Add(1))
		fill(b, s, subject, b.N)
		bridgetest.Direct(b, func(n int) {
			nc, err := nats.Connect("nats://" + s.Addr())
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			js, _ := jetstream.New(nc)
			cons, err := js.CreateOrUpdateConsumer(context.Background(), "RSBD_"+subject,
				jetstream.ConsumerConfig{Durable: "direct", AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 256})
			if err != nil {
				b.Fatal(err)
			}
			for got := 0; got < n; {
				batch, err := cons.Fetch(256, jetstream.FetchMaxWait(500*time.Millisecond))
				if err != nil {
					b.Fatal(err)
				}
				for m := range batch.Messages() {
					got++
					if err := m.Ack(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	})
}
