package amqp1

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
)

// durableQueue declares a durable queue (over AMQP 0.9.1, which RabbitMQ's
// AMQP 1.0 plugin cannot do) empty, and returns its AMQP 1.0 address
// /amq/queue/NAME.
func durableQueue(t testing.TB, node *brokertest.RabbitMQ, name string) string {
	t.Helper()
	brokertest.FreshQueue(t, node.Channel091(t), name)
	return "/amq/queue/" + name
}

func TestAMQP1OrderIsKeptBothWays(t *testing.T) {
	node := brokertest.Shared(t)
	const n, batch = 500, 50
	addr := durableQueue(t, node, "order.amqp1")
	bus := bridgetest.Bus(t)
	rd := bridgetest.Reader(t, bus, "/in/")
	inf := bridgetest.Informer(t, bus, "/out/")
	bridgetest.Run(t, bus, busConfig(node.URL10(), addr, addr, bridge.FormatBinary), nil)
	// Out through the bus onto the queue, then in from it onto the bus:
	// both crossings keep the order of the sequence numbers.
	for i := range n {
		bridgetest.PublishCE(t, inf, bridgetest.Event(i, 64))
	}
	for i := range n {
		if _, e := bridgetest.ReadCE(t, rd); bridgetest.Seq(e) != i {
			t.Fatalf("event %d on the bus has seq %d", i, bridgetest.Seq(e))
		}
	}
}

// TestAMQP1ReceiverReadsManyCreditWindows reads a queue of many times the
// receiver's credit, so the receiver grants credit again and again while
// the broker sends: it never waits with messages in the queue (a client
// that tops credit up while RabbitMQ's plugin sends makes it overshoot,
// and then waits for ever).
func TestAMQP1ReceiverReadsManyCreditWindows(t *testing.T) {
	node := brokertest.Shared(t)
	const n, credit = 600, 4
	addr := durableQueue(t, node, "credit.amqp1")
	send(t, session(t, node.URL10()), addr, encodedStream(t, n)...)
	b, err := Open(bridge.Settings{Name: "t", Kind: Kind, URL: node.URL10(), Format: bridge.FormatBinary,
		Options: map[string]string{OptCredit: strconv.Itoa(credit)}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.NewReceiver(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	in := bridgetest.Inbound(t, r, 0)
	for i := range n {
		select {
		case m := <-in:
			if m.Event == nil || bridgetest.Seq(m.Event) != i {
				t.Fatalf("message %d: %+v", i, m)
			}
		case <-time.After(timeout):
			t.Fatalf("the receiver delivered %d of %d messages, then nothing for %v; the queue: %s",
				i, n, timeout, queueDepth(node, "credit.amqp1"))
		}
	}
}
