package pulsar

import (
	"context"
	"fmt"
	"sync"
	"time"

	ps "github.com/apache/pulsar-client-go/pulsar"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

func init() { bridge.Register(Kind, Open) }

// OptSubscription is the option key of the inbound subscription's name
// (default "rsbd-<bridge name>").
const OptSubscription = "subscription"

// Broker is one Pulsar client of a bridge section, which makes its
// producers and consumers.
type Broker struct {
	client ps.Client
	format bridge.Format
	sub    string
	once   sync.Once
}

// Open returns the Broker of a [bridge.NAME] section of kind pulsar (URL
// pulsar://host:6650); its option is subscription. The default format
// is binary. It is the kind's bridge.Factory.
func Open(s bridge.Settings) (bridge.Broker, error) {
	if err := s.CheckOptions(OptSubscription); err != nil {
		return nil, err
	}
	f, err := s.CheckFormat(bridge.FormatBinary, bridge.FormatBinary, bridge.FormatStructured, bridge.FormatRaw, bridge.FormatFrame)
	if err != nil {
		return nil, err
	}
	c, err := ps.NewClient(ps.ClientOptions{URL: s.URL, OperationTimeout: operationTimeout, ConnectionTimeout: connectionTimeout})
	if err != nil {
		return nil, fmt.Errorf("%w: pulsar bridge %s: %w", bridge.ErrSettings, s.Name, err)
	}
	return &Broker{client: c, format: f, sub: s.Option(OptSubscription, "rsbd-"+s.Name)}, nil
}

// NewSender returns a producer to topic.
func (b *Broker) NewSender(_ context.Context, topic string) (bridge.Sender, error) {
	p, err := b.client.CreateProducer(ps.ProducerOptions{Topic: topic})
	if err != nil {
		return nil, fmt.Errorf("pulsar producer %q: %w", topic, err)
	}
	return &sender{p: p, format: b.format}, nil
}

// NewReceiver returns the exclusive consumer of topic: one ordered reader
// of the bridge's subscription.
func (b *Broker) NewReceiver(_ context.Context, topic string) (bridge.Receiver, error) {
	c, err := b.client.Subscribe(ps.ConsumerOptions{Topic: topic, SubscriptionName: b.sub, Type: ps.Exclusive,
		ReceiverQueueSize: ReceiverQueueSize})
	if err != nil {
		return nil, fmt.Errorf("pulsar consumer %q: %w", topic, err)
	}
	return &receiver{c: c, format: b.format}, nil
}

// Close closes the client; it is idempotent.
func (b *Broker) Close() error {
	b.once.Do(b.client.Close)
	return nil
}

// sender publishes to one topic.
type sender struct {
	p      ps.Producer
	format bridge.Format
	once   sync.Once
}

// Send publishes events in order and returns once the broker stored each.
// An event that cannot be encoded gives an error wrapping
// bridge.ErrRejected before anything is sent.
func (s *sender) Send(ctx context.Context, events []*cloudevent.Event) error {
	msgs := make([]*ps.ProducerMessage, len(events))
	for i, e := range events {
		m, err := Encode(s.format, e)
		if err != nil {
			return fmt.Errorf("%w: event %d: %w", bridge.ErrRejected, i, err)
		}
		msgs[i] = m
	}
	for i, m := range msgs {
		if _, err := s.p.Send(ctx, m); err != nil {
			return fmt.Errorf("pulsar send of message %d: %w", i, err)
		}
	}
	return nil
}

// Close closes the producer; it is idempotent.
func (s *sender) Close() error {
	s.once.Do(s.p.Close)
	return nil
}

// receiver reads one topic with an exclusive subscription.
type receiver struct {
	c      ps.Consumer
	format bridge.Format
	once   sync.Once
}

// Receive delivers the topic's messages in order and acknowledges each
// once deliver returned nil; it returns when ctx ends or with the
// consumer's or deliver's error (the subscription keeps what was not
// acknowledged).
func (r *receiver) Receive(ctx context.Context, deliver bridge.Deliver) error {
	for {
		m, err := r.c.Receive(ctx)
		if err != nil {
			return err
		}
		d := deliveryOf(m)
		var msg bridge.Message
		if e, err := Decode(&d, r.format, time.Now()); err != nil {
			msg = bridge.Message{Reason: bridge.ReasonOf(err), Err: err, Payload: d.Payload, Position: d.MessageID}
		} else {
			msg = bridge.Message{Event: e, Position: d.MessageID}
		}
		if err := deliver(ctx, msg); err != nil {
			return err
		}
		if err := r.c.Ack(m); err != nil {
			return fmt.Errorf("pulsar ack: %w", err)
		}
	}
}

// Close closes the consumer; it is idempotent.
func (r *receiver) Close() error {
	r.once.Do(r.c.Close)
	return nil
}
