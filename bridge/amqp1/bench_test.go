package amqp1

import (
	"context"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
	"github.com/rsbd/rsbd/internal/testutil"
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

// benchFill puts n binary events of BenchSize into the durable queue
// name at address: go-amqp sends them pre-settled, and benchFill waits
// until the queue holds them all.
func benchFill(b *testing.B, node *brokertest.RabbitMQ, name, address string, n int) {
	ctx := context.Background()
	snd, err := session(b, node.URL10()).NewSender(ctx, address, &amqp.SenderOptions{SettlementMode: amqp.SenderSettleModeSettled.Ptr()})
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range benchMessages(b, n) {
		if err := snd.Send(ctx, m, nil); err != nil {
			b.Fatal(err)
		}
	}
	testutil.WaitFor(b, 10*time.Minute, "the queue filled", func() bool {
		q, err := queueState(node, name)
		return err == nil && q.Messages >= n
	})
}

// benchReceive reads n messages of address with go-amqp, accepting each,
// with credit granted as the bridge's receiver grants it (window).
func benchReceive(b *testing.B, s *amqp.Session, address string, n int) {
	ctx := context.Background()
	r, err := s.NewReceiver(ctx, address, &amqp.ReceiverOptions{Credit: manualCredit})
	if err != nil {
		b.Fatal(err)
	}
	w := newWindow(DefaultCredit)
	if err := r.IssueCredit(w.open()); err != nil {
		b.Fatal(err)
	}
	for range n {
		m, err := r.Receive(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := w.received(); err != nil {
			b.Fatal(err)
		}
		if w.exhausted() {
			if err := r.IssueCredit(w.refill()); err != nil {
				b.Fatal(err)
			}
		}
		if err := r.AcceptMessage(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIn: RabbitMQ's AMQP 1.0 plugin → bus through the bridge
// (binary, each message accepted after the bus took it), beside go-amqp
// receiving and accepting the same messages directly with the same
// credit.
func BenchmarkIn(b *testing.B) {
	node := brokertest.Shared(b)
	b.Run("bridge", func(b *testing.B) {
		addr := durableQueue(b, node, "bench1.in")
		cfg := bridge.DefaultConfig()
		cfg.Settings = bridge.Settings{Name: "bench-in", Kind: Kind, URL: node.URL10(), Format: bridge.FormatBinary}
		cfg.In = bridge.Route{Scope: "/bench/", Address: addr}
		bridgetest.BenchIn(b, bridgetest.Bus(b), cfg, func(n int) { benchFill(b, node, "bench1.in", addr, n) })
	})
	b.Run("direct", func(b *testing.B) {
		addr := durableQueue(b, node, "bench1.in")
		benchFill(b, node, "bench1.in", addr, b.N)
		s := session(b, node.URL10())
		bridgetest.Direct(b, func(n int) { benchReceive(b, s, addr, n) })
	})
}
