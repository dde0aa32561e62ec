package amqp091

import (
	"context"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
)

// benchFill publishes n binary events of BenchSize to queue q with
// publisher confirms, in batches of 256, as the bridge's sender does.
func benchFill(b *testing.B, ch *amqp.Channel, q string, n int) {
	if err := ch.Confirm(false); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i += 256 {
		var dcs []*amqp.DeferredConfirmation
		for j := i; j < min(n, i+256); j++ {
			p, _ := Encode(bridge.FormatBinary, bridgetest.Event(j, bridgetest.BenchSize))
			dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", q, false, false, p)
			if err != nil {
				b.Fatal(err)
			}
			dcs = append(dcs, dc)
		}
		for _, dc := range dcs {
			if !dc.Wait() {
				b.Fatal("nack")
			}
		}
	}
}

// benchQueue returns a fresh durable queue and a channel on the node.
func benchQueue(b *testing.B, node *brokertest.RabbitMQ, name string) *amqp.Channel {
	ch := node.Channel091(b)
	brokertest.FreshQueue(b, ch, name)
	return ch
}

// BenchmarkOut: bus → RabbitMQ through the bridge (binary, confirms),
// beside amqp091-go publishing the same messages with confirms directly.
func BenchmarkOut(b *testing.B) {
	node := brokertest.Shared(b)
	b.Run("bridge", func(b *testing.B) {
		benchQueue(b, node, "bench.out")
		cfg := bridge.DefaultConfig()
		cfg.Settings = bridge.Settings{Name: "bench-out", Kind: Kind, URL: node.URL091(), Format: bridge.FormatBinary}
		cfg.Out = bridge.Route{Scope: "/bench/", Address: "bench.out"}
		bridgetest.BenchOut(b, bridgetest.Bus(b), cfg)
	})
	b.Run("direct", func(b *testing.B) {
		ch := benchQueue(b, node, "bench.out")
		bridgetest.Direct(b, func(n int) { benchFill(b, ch, "bench.out", n) })
	})
}

// BenchmarkIn: RabbitMQ → bus through the bridge, beside an amqp091-go
// consumer with the same prefetch acknowledging each message directly.
func BenchmarkIn(b *testing.B) {
	node := brokertest.Shared(b)
	b.Run("bridge", func(b *testing.B) {
		ch := benchQueue(b, node, "bench.in")
		cfg := bridge.DefaultConfig()
		cfg.Settings = bridge.Settings{Name: "bench-in", Kind: Kind, URL: node.URL091(), Format: bridge.FormatBinary}
		cfg.In = bridge.Route{Scope: "/bench/", Address: "bench.in"}
		bridgetest.BenchIn(b, bridgetest.Bus(b), cfg, func(n int) { benchFill(b, ch, "bench.in", n) })
	})
	b.Run("direct", func(b *testing.B) {
		ch := benchQueue(b, node, "bench.in")
		benchFill(b, ch, "bench.in", b.N)
		bridgetest.Direct(b, func(n int) {
			if err := ch.Qos(DefaultPrefetch, 0, false); err != nil {
				b.Fatal(err)
			}
			ds, err := ch.Consume("bench.in", "", false, true, false, false, nil)
			if err != nil {
				b.Fatal(err)
			}
			for range n {
				d := <-ds
				if err := d.Ack(false); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
