package amqp1

import (
	"testing"

	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
)

// durableQueue declares a durable queue (over AMQP 0.9.1, which RabbitMQ's
// AMQP 1.0 plugin cannot do) empty, and returns its AMQP 1.0 address
// /amq/queue/NAME.
func durableQueue(t testing.TB, node *brokertest.RabbitMQ, name string) string {
	t.Helper()
	conn, err := amqp091.Dial(node.URL091())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDelete(name, false, false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(name, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
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
