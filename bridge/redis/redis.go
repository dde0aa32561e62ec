package redis

import (
	"context"
	"errors"
	"fmt"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// Options of a Redis bridge's section.
const (
	optMode  = "mode"  // stream or pubsub
	optGroup = "group" // consumer group of an inbound stream
	optStart = "start" // latest or earliest, for a new group
)

func init() { bridge.Register(kind, New) }

// Broker is a Redis server as a bridge sees it.
type Broker struct {
	opts   *goredis.Options
	pubsub bool
	format bridge.Format
	group  string
	start  string
	name   string
}

// New is the Factory of kind "redis".
func New(s bridge.Settings) (bridge.Broker, error) {
	if err := s.CheckOptions(optMode, optGroup, optStart); err != nil {
		return nil, err
	}
	b := &Broker{group: s.Option(optGroup, "rsbd-"+s.Name), name: s.Name}
	var err error
	switch s.Option(optMode, "stream") {
	case "stream":
		b.format, err = s.CheckFormat(bridge.FormatBinary, bridge.FormatBinary, bridge.FormatStructured, bridge.FormatRaw, bridge.FormatFrame)
	case "pubsub":
		b.pubsub = true
		b.format, err = s.CheckFormat(bridge.FormatStructured, bridge.FormatStructured, bridge.FormatRaw, bridge.FormatFrame)
	default:
		err = fmt.Errorf("%w: redis bridge %s: mode is stream or pubsub", bridge.ErrSettings, s.Name)
	}
	if err != nil {
		return nil, err
	}
	switch s.Option(optStart, "latest") {
	case "latest":
		b.start = "$"
	case "earliest":
		b.start = "0"
	default:
		return nil, fmt.Errorf("%w: redis bridge %s: start is latest or earliest", bridge.ErrSettings, s.Name)
	}
	if b.opts, err = goredis.ParseURL(s.URL); err != nil {
		return nil, fmt.Errorf("%w: redis bridge %s: %w", bridge.ErrSettings, s.Name, err)
	}
	b.opts.ClientName = "rsbd-bridge-" + s.Name
	return b, nil
}

// client returns a client that reached the server.
func (b *Broker) client(ctx context.Context) (*goredis.Client, error) {
	c := goredis.NewClient(b.opts)
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redis: %w", err)
	}
	return c, nil
}

// NewSender returns a sender to a stream or channel.
func (b *Broker) NewSender(ctx context.Context, address string) (bridge.Sender, error) {
	c, err := b.client(ctx)
	if err != nil {
		return nil, err
	}
	return &sender{c: c, address: address, pubsub: b.pubsub, format: b.format}, nil
}

// NewReceiver returns a consumer of a stream (in the bridge's group) or
// a subscriber of a channel.
func (b *Broker) NewReceiver(ctx context.Context, address string) (bridge.Receiver, error) {
	c, err := b.client(ctx)
	if err != nil {
		return nil, err
	}
	if b.pubsub {
		ps := c.Subscribe(ctx, address)
		if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
			_ = ps.Close()
			_ = c.Close()
			return nil, fmt.Errorf("redis: subscribe %s: %w", address, err)
		}
		return &subscriber{c: c, ps: ps, format: b.format}, nil
	}
	err = c.XGroupCreateMkStream(ctx, address, b.group, b.start).Err()
	if err != nil && !isBusyGroup(err) {
		_ = c.Close()
		return nil, fmt.Errorf("redis: group %s on %s: %w", b.group, address, err)
	}
	return &consumer{c: c, stream: address, group: b.group, name: "rsbd-" + b.name, format: b.format}, nil
}

// isBusyGroup reports whether err says the group exists already.
func isBusyGroup(err error) bool {
	var re goredis.Error
	return errors.As(err, &re) && len(re.Error()) >= 9 && re.Error()[:9] == "BUSYGROUP"
}

// Close has nothing to release: each Sender and Receiver owns its client.
func (b *Broker) Close() error { return nil }

// sender adds entries to a stream or publishes to a channel.
type sender struct {
	c       *goredis.Client
	address string
	pubsub  bool
	format  bridge.Format
	once    sync.Once
}

// Send writes the events in one pipeline and checks every reply.
func (s *sender) Send(ctx context.Context, events []*cloudevent.Event) error {
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	p := s.c.Pipeline()
	for _, e := range events {
		if s.pubsub {
			v, err := bridge.EncodeValue(s.format, e)
			if err != nil {
				return fmt.Errorf("%w: %w", bridge.ErrRejected, err)
			}
			p.Publish(ctx, s.address, v)
			continue
		}
		fields, err := entryFields(s.format, e)
		if err != nil {
			return fmt.Errorf("%w: %w", bridge.ErrRejected, err)
		}
		p.XAdd(ctx, &goredis.XAddArgs{Stream: s.address, Values: fields})
	}
	_, err := p.Exec(ctx)
	return err
}

// Probe checks that the server answers.
func (s *sender) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	return s.c.Ping(ctx).Err()
}

// Close closes the client.
func (s *sender) Close() error {
	s.once.Do(func() { _ = s.c.Close() })
	return nil
}
