package brokertest

import (
	"testing"

	amqp091 "github.com/rabbitmq/amqp091-go"
)

// Channel091 returns a channel of the test to the node over AMQP 0.9.1,
// its connection closed at the end of the test.
func (r *RabbitMQ) Channel091(t testing.TB) *amqp091.Channel {
	t.Helper()
	conn, err := amqp091.Dial(r.URL091())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// FreshQueue deletes queue name, if it exists, and declares it again over
// ch, durable and empty.
func FreshQueue(t testing.TB, ch *amqp091.Channel, name string) {
	t.Helper()
	if _, err := ch.QueueDelete(name, false, false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(name, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
}
