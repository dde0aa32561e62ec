package amqp091

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
)

// timeout bounds every wait of these tests: generous, the host is loaded.
const timeout = 60 * time.Second

func TestMain(m *testing.M) { brokertest.Main(m) }

// queueName returns a queue name of its own for the test.
func queueName(t *testing.T) string {
	return strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
}

// openBroker returns the Broker of a rabbitmq section.
func openBroker(t *testing.T, url string, f bridge.Format, opts map[string]string) bridge.Broker {
	t.Helper()
	b, err := Open(bridge.Settings{Name: "rb", Kind: Kind, URL: url, Format: f, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// declare declares a durable queue.
func declare(t *testing.T, ch *amqp.Channel, q string) {
	t.Helper()
	if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
}

// publishTo declares the durable queue q on node and publishes ps to it,
// in order, over a plain channel of the test.
func publishTo(t *testing.T, node *brokertest.RabbitMQ, q string, ps ...amqp.Publishing) {
	t.Helper()
	ch := node.Channel091(t)
	declare(t, ch, q)
	for _, p := range ps {
		if err := ch.PublishWithContext(context.Background(), "", q, false, false, p); err != nil {
			t.Fatal(err)
		}
	}
}

// get reads the next message of q, waiting for it.
func get(t *testing.T, ch *amqp.Channel, q string) amqp.Delivery {
	t.Helper()
	var d amqp.Delivery
	testutil.WaitFor(t, timeout, "a message on "+q, func() bool {
		var ok bool
		var err error
		d, ok, err = ch.Get(q, true)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	})
	return d
}

func TestRabbitMQBinaryOutHasHeadersAndConfirms(t *testing.T) {
	node := brokertest.Shared(t)
	q := queueName(t)
	s, _ := openBroker(t, node.URL091(), bridge.FormatDefault, nil).NewSender(context.Background(), q)
	defer s.Close()
	bridgetest.SendAll(t, s, []*cloudevent.Event{bridgetest.Sample()}, timeout)
	d := get(t, node.Channel091(t), q)
	if d.Headers["cloudEvents:id"] != "e-1" || d.Headers["cloudEvents:specversion"] != "1.0" || d.ContentType != "application/json" ||
		string(d.Body) != `{"c":21.5}` || d.DeliveryMode != amqp.Persistent {
		t.Fatalf("delivery %+v", d)
	}
}

func TestRabbitMQExchangeAndRoutingKeyBothWays(t *testing.T) {
	node := brokertest.Shared(t)
	q := queueName(t)
	b := openBroker(t, node.URL091(), bridge.FormatBinary, map[string]string{"bind": "amq.topic/sensors.#"})
	in := bridgetest.Inbound(t, mustReceiver(t, b, q), 4096)
	s, _ := b.NewSender(context.Background(), "amq.topic/sensors.temp")
	defer s.Close()
	// The receiver declares and binds the queue when it starts; send until
	// the first event arrives.
	var got bridge.Message
	for got.Event == nil {
		bridgetest.SendAll(t, s, []*cloudevent.Event{bridgetest.Sample()}, timeout)
		select {
		case got = <-in:
		case <-time.After(500 * time.Millisecond):
		}
	}
	sameEvent(t, got.Event, bridgetest.Sample(), "sensors.temp", "false")
}

// mustReceiver returns the receiver of q.
func mustReceiver(t *testing.T, b bridge.Broker, q string) bridge.Receiver {
	t.Helper()
	r, err := b.NewReceiver(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRabbitMQPlainMessageFromTheGoClientIsAnEvent(t *testing.T) {
	node := brokertest.Shared(t)
	q := queueName(t)
	ts := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	publishTo(t, node, q, amqp.Publishing{MessageId: "order-42", Timestamp: ts, Body: []byte(`{"qty":3}`)},
		amqp.Publishing{Body: []byte("no id")})
	in := bridgetest.Inbound(t, mustReceiver(t, openBroker(t, node.URL091(), bridge.FormatBinary, nil), q), 4096)
	first, second := bridgetest.Next(t, in, timeout), bridgetest.Next(t, in, timeout)
	want := &cloudevent.Event{ID: "order-42", Source: "/rabbitmq/" + q, Type: bridge.FallbackType, Time: cloudevent.FormatTime(ts),
		DataContentType: bridge.ContentJSON, Data: []byte(`{"qty":3}`)}
	sameEvent(t, first.Event, want, q, "false")
	if e := second.Event; e == nil || !strings.HasPrefix(e.ID, q+"-") || e.DataContentType != bridge.ContentText || second.Position != e.ID {
		t.Fatalf("second %+v", second)
	}
}

func TestRabbitMQMalformedMessagesAreHandedOnWithAReason(t *testing.T) {
	node := brokertest.Shared(t)
	q := queueName(t)
	publishTo(t, node, q,
		amqp.Publishing{ContentType: cloudevent.MediaType, Body: []byte(`{"specversion":"1.0",`)},
		amqp.Publishing{Headers: amqp.Table{"cloudEvents:specversion": "1.0", "cloudEvents:id": "1", "cloudEvents:source": "/s",
			"cloudEvents:type": "t", "cloudEvents:Not_Valid": "v"}, Body: []byte("x")},
		amqp.Publishing{MessageId: "fine", Body: []byte("fine")})
	in := bridgetest.Inbound(t, mustReceiver(t, openBroker(t, node.URL091(), bridge.FormatBinary, nil), q), 4096)
	for _, want := range []bridge.Reason{bridge.ReasonJSON, bridge.ReasonAttribute} {
		if got := bridgetest.Next(t, in, timeout); got.Event != nil || got.Reason != want || len(got.Payload) == 0 {
			t.Fatalf("got %+v, want reason %s", got, want)
		}
	}
	if got := bridgetest.Next(t, in, timeout); got.Event == nil || got.Event.ID != "fine" {
		t.Fatalf("after the malformed ones: %+v", got)
	}
}

func TestRabbitMQOrderIsKeptBothWays(t *testing.T) {
	node := brokertest.Shared(t)
	q := queueName(t)
	b := openBroker(t, node.URL091(), bridge.FormatBinary, nil)
	s, _ := b.NewSender(context.Background(), q)
	defer s.Close()
	const n, batch = 500, 50
	bridgetest.SendStream(t, s, n, batch, bridgetest.SeqEvent, nil, timeout)
	in := bridgetest.Inbound(t, mustReceiver(t, b, q), 4096)
	for i := range n {
		got := bridgetest.Next(t, in, timeout)
		if got.Event == nil || got.Event.Extensions["seq"] != strconv.Itoa(i) {
			t.Fatalf("message %d: %+v", i, got)
		}
	}
}
