package amqp1

import (
	"context"
	"errors"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
	"github.com/rsbd/rsbd/cloudevent"
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

// sendAll sends events as the runner does: a failed batch again, after
// the runner's back-off, until the broker takes it.
func sendAll(t *testing.T, s bridge.Sender, events []*cloudevent.Event) (retries int) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err := s.Send(ctx, events)
		cancel()
		if err == nil {
			return retries
		}
		if time.Now().After(deadline) {
			t.Fatalf("send: %v", err)
		}
		retries++
		<-time.After(50 * time.Millisecond)
	}
}

// sendStream sends events 0 to n-1 through s in batches; restart is
// called once, before the first batch past n/2.
func sendStream(t *testing.T, s bridge.Sender, n, batch int, restart func()) (retries int) {
	t.Helper()
	for i := 0; i < n; i += batch {
		if i >= n/2 && restart != nil {
			restart()
			restart = nil
		}
		events := make([]*cloudevent.Event, 0, batch)
		for j := i; j < min(n, i+batch); j++ {
			events = append(events, bridgetest.Event(j, 64))
		}
		retries += sendAll(t, s, events)
	}
	return retries
}

// inbound runs r as the runner does (Receive again after the back-off
// when it ends) and returns what it delivers, unbuffered: the receiver
// accepts a message only once the test took it.
func inbound(t *testing.T, r bridge.Receiver) <-chan bridge.Message {
	t.Helper()
	out := make(chan bridge.Message)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			err := r.Receive(ctx, func(ctx context.Context, m bridge.Message) error {
				select {
				case out <- m:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
			if errors.Is(err, bridge.ErrClosed) {
				return
			}
			select {
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
			}
		}
	}()
	t.Cleanup(func() { cancel(); _ = r.Close(); <-done })
	return out
}

// next returns the next event of ch.
func next(t *testing.T, ch <-chan bridge.Message) *cloudevent.Event {
	t.Helper()
	select {
	case m := <-ch:
		if m.Event == nil {
			t.Fatalf("not an event: %v", m.Err)
		}
		return m.Event
	case <-time.After(timeout):
		t.Fatal("no message")
	}
	return nil
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

// TestAMQP1RestartLosesNoAcknowledgedEvent restarts RabbitMQ in the middle
// of a stream in each direction and counts the events: every event whose
// Send returned is in the durable queue after the restart, and every
// message the broker held reaches the receiver's consumer. A queue the
// plugin declared for /queue/NAME is not durable and is gone.
func TestAMQP1RestartLosesNoAcknowledgedEvent(t *testing.T) {
	node := brokertest.StartRabbitMQTest(t)
	const n, batch = 300, 20
	b := openBroker(t, node.URL10(), bridge.FormatBinary)
	outAddr, inAddr := durableQueue(t, node, "restart.out"), durableQueue(t, node, "restart.in")
	s := session(t, node.URL10())
	send(t, s, "/queue/restart.transient", encodedStream(t, 1)...)

	snd, _ := b.NewSender(context.Background(), outAddr)
	defer snd.Close()
	var restarted <-chan error
	retries := sendStream(t, snd, n, batch, func() { restarted = node.RestartAsync() })
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	s = session(t, node.URL10())
	out, dups := map[int]bool{}, 0
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	rcv, err := s.NewReceiver(ctx, outAddr, &amqp.ReceiverOptions{Credit: 64})
	if err != nil {
		t.Fatal(err)
	}
	for len(out) < n {
		m, err := rcv.Receive(ctx, nil)
		if err != nil {
			t.Fatalf("out: %d distinct events of %d in the queue: %v", len(out), n, err)
		}
		if err := rcv.AcceptMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		e, err := Decode(m, outAddr, bridge.FormatBinary, "x", at)
		if err != nil {
			t.Fatal(err)
		}
		if out[bridgetest.Seq(e)] {
			dups++
		}
		out[bridgetest.Seq(e)] = true
	}
	if len(out) != n {
		t.Fatalf("out: %d distinct events of %d", len(out), n)
	}
	t.Logf("out: all %d sent events in the queue after the restart; %d batches sent again, %d duplicates", n, retries, dups)
	if _, err := s.NewReceiver(ctx, "/amq/queue/restart.transient", nil); err == nil {
		t.Error("the queue /queue/restart.transient declared survived the restart")
	}

	s = session(t, node.URL10())
	send(t, s, inAddr, encodedStream(t, n)...)
	in := inbound(t, mustReceiver(t, b, inAddr))
	seen := map[int]bool{}
	restarted = nil
	for len(seen) < n {
		seen[bridgetest.Seq(next(t, in))] = true
		if len(seen) == n/2 && restarted == nil {
			restarted = node.RestartAsync()
		}
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	t.Logf("in: the receiver read all %d messages across the restart", n)
}

// mustReceiver returns b's receiver of address.
func mustReceiver(t *testing.T, b bridge.Broker, address string) bridge.Receiver {
	t.Helper()
	r, err := b.NewReceiver(context.Background(), address)
	if err != nil {
		t.Fatal(err)
	}
	return r
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
