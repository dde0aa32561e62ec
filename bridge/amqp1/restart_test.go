package amqp1

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
)

// openBroker opens the kind's Broker on url in format f.
func openBroker(t testing.TB, url string, f bridge.Format) bridge.Broker {
	t.Helper()
	b, err := Open(bridge.Settings{Name: "t", Kind: Kind, URL: url, Format: f})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// queueState returns queue name as a passive declaration over AMQP
// 0.9.1 sees it: its ready messages and consumers (the management
// commands need the CLI's cookie).
func queueState(node *brokertest.RabbitMQ, name string) (amqp091.Queue, error) {
	conn, err := amqp091.Dial(node.URL091())
	if err != nil {
		return amqp091.Queue{}, err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return amqp091.Queue{}, err
	}
	return ch.QueueDeclarePassive(name, true, false, false, false, nil)
}

// queueDepth describes queue name for a failure message.
func queueDepth(node *brokertest.RabbitMQ, name string) string {
	q, err := queueState(node, name)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d ready, %d consumers", q.Messages, q.Consumers)
}

// drain takes every message of queue name over AMQP 0.9.1 (basic.get, no
// credit involved) and returns the sequence numbers of the events, and
// how many messages repeated one.
func drain(t *testing.T, node *brokertest.RabbitMQ, name string) (seqs map[int]bool, dups int) {
	t.Helper()
	ch := node.Channel091(t)
	seqs = map[int]bool{}
	for {
		d, ok, err := ch.Get(name, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return seqs, dups
		}
		// The plugin keeps the data section of a binary message as the
		// body: the event's data, which numbers it as n.
		var data struct{ N int }
		if err := json.Unmarshal(d.Body, &data); err != nil {
			t.Fatalf("message %d %q: %v", d.DeliveryTag, d.Body, err)
		}
		if seqs[data.N] {
			dups++
		}
		seqs[data.N] = true
	}
}

// encodedStream returns events 0 to n-1 as binary messages.
func encodedStream(t *testing.T, n int) []*amqp.Message {
	t.Helper()
	msgs := make([]*amqp.Message, n)
	for i := range n {
		m, err := Encode(bridge.FormatBinary, bridgetest.Event(i, 64))
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = m
	}
	return msgs
}

// TestAMQP1SenderLosesNoAcceptedEventAcrossABrokerRestart restarts
// RabbitMQ while the bridge's sender sends a stream to a durable queue:
// every event of a Send that returned is in the queue afterwards, read
// over AMQP 0.9.1 so that no AMQP 1.0 credit is involved in the count.
func TestAMQP1SenderLosesNoAcceptedEventAcrossABrokerRestart(t *testing.T) {
	node := brokertest.StartRabbitMQTest(t)
	const n, batch = 300, 20
	addr := durableQueue(t, node, "restart.out")
	snd, err := openBroker(t, node.URL10(), bridge.FormatBinary).NewSender(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close()
	retries := bridgetest.SendStream(t, snd, n, batch, bridgetest.SizedEvent(64), node.RestartAsync, timeout)
	depth := queueDepth(node, "restart.out")
	seen, dups := drain(t, node, "restart.out")
	if len(seen) != n {
		t.Fatalf("the queue (%s) holds %d of %d accepted events (%d batches sent again, %d duplicates); missing %v",
			depth, len(seen), n, retries, dups, bridgetest.Missing(seen, n))
	}
	t.Logf("all %d accepted events in the queue after the restart; %d batches sent again, %d duplicates", n, retries, dups)
}

// TestAMQP1ReceiverLosesNoMessageAcrossABrokerRestart restarts RabbitMQ
// when the bridge's receiver has delivered half of the durable messages
// of a queue: every message reaches the bus, those the restart caught
// between delivery and acceptance twice at most.
func TestAMQP1ReceiverLosesNoMessageAcrossABrokerRestart(t *testing.T) {
	node := brokertest.StartRabbitMQTest(t)
	const n = 300
	addr := durableQueue(t, node, "restart.in")
	send(t, session(t, node.URL10()), addr, encodedStream(t, n)...)
	if d := queueDepth(node, "restart.in"); d != fmt.Sprintf("%d ready, 0 consumers", n) {
		t.Fatalf("the queue before the stream: %s", d)
	}
	r, err := openBroker(t, node.URL10(), bridge.FormatBinary).NewReceiver(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	in := bridgetest.Inbound(t, r, 0)
	seen, dups := map[int]bool{}, 0
	var restarted <-chan error
	for len(seen) < n {
		select {
		case m := <-in:
			if m.Event == nil {
				t.Fatalf("not an event: %v", m.Err)
			}
			if seen[bridgetest.Seq(m.Event)] {
				dups++
			}
			seen[bridgetest.Seq(m.Event)] = true
		case <-time.After(timeout):
			t.Fatalf("the receiver delivered %d of %d messages (%d twice), then nothing for %v; the queue: %s; missing %v",
				len(seen), n, dups, timeout, queueDepth(node, "restart.in"), bridgetest.Missing(seen, n))
		}
		if len(seen) == n/2 && restarted == nil {
			restarted = node.RestartAsync()
		}
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	// Only a message delivered before the restart can come again: its
	// acceptance may not have reached the queue.
	if dups > n/2 {
		t.Fatalf("%d messages delivered twice, more than were delivered before the restart", dups)
	}
	t.Logf("the receiver delivered all %d messages across the restart, %d twice", n, dups)
}
