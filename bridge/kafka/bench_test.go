package kafka_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
)

var benchRun atomic.Int64

// benchEnv is an in-memory kfake cluster and a bus.
func benchEnv(b *testing.B) (*cluster, func() string) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	var port int
	fmt.Sscanf(c.ListenAddrs()[0], "127.0.0.1:%d", &port)
	return &cluster{t: b, c: c, port: port}, func() string { return fmt.Sprintf("bench-%d", benchRun.Add(1)) }
}

// fill produces n binary records of BenchSize with a plain client.
func fill(b *testing.B, k *cluster, topic string, n int) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.addr()), kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(0))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	for i := 0; i < n; i += 256 {
		var recs []*kgo.Record
		for j := i; j < min(n, i+256); j++ {
			recs = append(recs, record(nil, bridge.FormatBinary, topic, bridgetest.Event(j, bridgetest.BenchSize)))
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOut: bus → Kafka through the bridge, beside franz-go producing
// the same binary records directly (acks=all, batches of 256).
func BenchmarkOut(b *testing.B) {
	b.Run("bridge", func(b *testing.B) {
		k, topic := benchEnv(b)
		cfg := k.config("bench-out", bridge.FormatBinary)
		cfg.Out = bridge.Route{Scope: "/bench/", Address: topic()}
		bridgetest.BenchOut(b, bridgetest.Bus(b), cfg)
	})
	b.Run("direct", func(b *testing.B) {
		k, topic := benchEnv(b)
		t := topic()
		bridgetest.Direct(b, func(n int) { fill(b, k, t, n) })
	})
}

// BenchmarkIn: Kafka → bus through the bridge, beside a franz-go group
// consumer reading and committing the same records directly.
func BenchmarkIn(b *testing.B) {
	b.Run("bridge", func(b *testing.B) {
		k, topic := benchEnv(b)
		cfg := k.config("bench-in", bridge.FormatBinary)
		cfg.In = bridge.Route{Scope: "/bench/", Address: topic()}
		bridgetest.BenchIn(b, bridgetest.Bus(b), cfg, func(n int) { fill(b, k, cfg.In.Address, n) })
	})
	b.Run("direct", func(b *testing.B) {
		k, topic := benchEnv(b)
		t := topic()
		fill(b, k, t, b.N)
		bridgetest.Direct(b, func(n int) {
			cl, err := kgo.NewClient(kgo.SeedBrokers(k.addr()), kgo.ConsumerGroup(t), kgo.ConsumeTopics(t),
				kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			for got := 0; got < n; {
				fs := cl.PollRecords(context.Background(), 512)
				recs := fs.Records()
				got += len(recs)
				if err := cl.CommitRecords(context.Background(), recs...); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
