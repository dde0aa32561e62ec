package amqp1

import (
	"context"
	"testing"

	amqp "github.com/Azure/go-amqp"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
)

// benchMessages returns n binary messages of events of BenchSize.
func benchMessages(b *testing.B, n int) []*amqp.Message {
	msgs := make([]*amqp.Message, n)
	for i := range n {
		m, err := Encode(bridge.FormatBinary, bridgetest.Event(i, bridgetest.BenchSize))
		if err != nil {
			b.Fatal(err)
		}
		msgs[i] = m
	}
	return msgs
}

// benchSend sends msgs to address with go-amqp, each settled by the
// broker before the next, as the bridge's sender does.
func benchSend(b *testing.B, s *amqp.Session, address string, msgs []*amqp.Message) {
	ctx := context.Background()
	snd, err := s.NewSender(ctx, address, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range msgs {
		if err := snd.Send(ctx, m, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOut: bus → RabbitMQ's AMQP 1.0 plugin through the bridge
// (binary, unsettled, each outcome awaited), beside go-amqp sending the
// same messages the same way directly.
func BenchmarkOut(b *testing.B) {
	node := brokertest.Shared(b)
	b.Run("bridge", func(b *testing.B) {
		addr := durableQueue(b, node, "bench1.out")
		cfg := bridge.DefaultConfig()
		cfg.Settings = bridge.Settings{Name: "bench-out", Kind: Kind, URL: node.URL10(), Format: bridge.FormatBinary}
		cfg.Out = bridge.Route{Scope: "/bench/", Address: addr}
		bridgetest.BenchOut(b, bridgetest.Bus(b), cfg)
	})
	b.Run("direct", func(b *testing.B) {
		addr := durableQueue(b, node, "bench1.out")
		s := session(b, node.URL10())
		msgs := benchMessages(b, b.N)
		bridgetest.Direct(b, func(int) { benchSend(b, s, addr, msgs) })
	})
}
