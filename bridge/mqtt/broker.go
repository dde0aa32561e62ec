package mqtt

import (
	"context"
	"log/slog"

	"github.com/rsbd/rsbd/bridge"
)

func init() { bridge.Register(Kind, Open) }

// Broker makes the MQTT senders and receivers of one bridge section; each
// has a connection of its own.
type Broker struct {
	cfg Config
	log *slog.Logger
}

// Open returns the Broker of a [bridge.NAME] section of kind mqtt: its
// options are protocol, qos, retain and clientid (Config). It is the
// kind's bridge.Factory.
func Open(s bridge.Settings) (bridge.Broker, error) {
	cfg, err := configOf(s)
	if err != nil {
		return nil, err
	}
	return New(cfg, s.Log()), nil
}

// New returns the Broker of a validated cfg.
func New(cfg Config, log *slog.Logger) *Broker {
	return &Broker{cfg: cfg, log: log}
}

// NewSender returns a sender publishing to topic.
func (b *Broker) NewSender(_ context.Context, topic string) (bridge.Sender, error) {
	if b.cfg.Protocol == Protocol311 {
		return newSender3(&b.cfg, topic, b.log), nil
	}
	return newSender5(&b.cfg, topic, b.log)
}

// NewReceiver returns a receiver of the topic filter.
func (b *Broker) NewReceiver(_ context.Context, filter string) (bridge.Receiver, error) {
	if b.cfg.Protocol == Protocol311 {
		return newReceiver3(&b.cfg, filter, b.log), nil
	}
	return newReceiver5(&b.cfg, filter, b.log)
}

// Close does nothing: each sender and receiver owns its connection.
func (b *Broker) Close() error { return nil }
