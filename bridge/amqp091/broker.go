package amqp091

import (
	"context"

	"github.com/rsbd/rsbd/bridge"
)

func init() { bridge.Register(Kind, Open) }

// Broker makes the RabbitMQ senders and receivers of one bridge section;
// each has a connection of its own.
type Broker struct {
	cfg Config
}

// Open returns the Broker of a [bridge.NAME] section of kind rabbitmq:
// its options are declare, bind and prefetch (Config). It is the kind's
// bridge.Factory.
func Open(s bridge.Settings) (bridge.Broker, error) {
	cfg, err := configOf(s)
	if err != nil {
		return nil, err
	}
	return New(cfg), nil
}

// New returns the Broker of a validated cfg.
func New(cfg Config) *Broker { return &Broker{cfg: cfg} }

// NewSender returns a sender to address: "EXCHANGE/ROUTING_KEY", or a
// queue name (ParseAddress).
func (b *Broker) NewSender(_ context.Context, address string) (bridge.Sender, error) {
	return newSender(&b.cfg, address), nil
}

// NewReceiver returns a receiver of the queue named address.
func (b *Broker) NewReceiver(_ context.Context, queue string) (bridge.Receiver, error) {
	return newReceiver(&b.cfg, queue), nil
}

// Close does nothing: each sender and receiver owns its connection.
func (b *Broker) Close() error { return nil }
