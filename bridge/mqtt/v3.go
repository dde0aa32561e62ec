package mqtt

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	paho3 "github.com/eclipse/paho.mqtt.golang"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// conn3 is an MQTT 3.1.1 connection of one side of a bridge; the client
// library connects again with backoff after a failure.
type conn3 struct {
	cli  paho3.Client
	down chan struct{} // 1-buffered: the connection went down
	once sync.Once
}

// dial3 starts an MQTT 3.1.1 client of client id with a persistent
// session (clean session false); onUp runs each time it is connected.
func dial3(cfg *Config, id string, log *slog.Logger, onUp func(paho3.Client)) *conn3 {
	c := &conn3{down: make(chan struct{}, 1)}
	user, password := cfg.credentials()
	o := paho3.NewClientOptions().
		AddBroker(cfg.serverURL("tcp").String()).
		SetClientID(id).
		SetProtocolVersion(4).
		SetUsername(user).SetPassword(password).
		SetCleanSession(false).
		SetKeepAlive(keepAlive * time.Second).
		SetConnectTimeout(connectTimeout).
		SetAutoReconnect(true).SetConnectRetry(true).
		SetConnectRetryInterval(backoffMin).SetMaxReconnectInterval(backoffMax).
		SetOrderMatters(true).
		SetAutoAckDisabled(true).
		SetResumeSubs(true).
		SetOnConnectHandler(func(cl paho3.Client) {
			if onUp != nil {
				go onUp(cl)
			}
		}).
		SetConnectionLostHandler(func(_ paho3.Client, err error) {
			log.Debug("mqtt connection lost", "client", id, "err", err)
			select {
			case c.down <- struct{}{}:
			default:
			}
		})
	c.cli = paho3.NewClient(o)
	c.cli.Connect()
	return c
}

// await waits up to connectTimeout for the client to be connected.
func (c *conn3) await(ctx context.Context) error {
	deadline := time.NewTimer(connectTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(backoffMin)
	defer tick.Stop()
	for !c.cli.IsConnectionOpen() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return ErrDisconnected
		case <-tick.C:
		}
	}
	return nil
}

// wait waits for tok under ctx and publishTimeout.
func wait(ctx context.Context, tok paho3.Token) error {
	t := time.NewTimer(publishTimeout)
	defer t.Stop()
	select {
	case <-tok.Done():
		return tok.Error()
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("%w: no acknowledgement within %v", ErrDisconnected, publishTimeout)
	}
}

// close disconnects; it is idempotent.
func (c *conn3) close() {
	c.once.Do(func() { c.cli.Disconnect(uint(disconnectTimeout / time.Millisecond)) })
}

// sender3 publishes events to one topic over MQTT 3.1.1.
type sender3 struct {
	cfg   *Config
	topic string
	conn  *conn3
}

// newSender3 connects a sender of topic.
func newSender3(cfg *Config, topic string, log *slog.Logger) *sender3 {
	return &sender3{cfg: cfg, topic: topic, conn: dial3(cfg, cfg.clientID("out", topic), log, nil)}
}

// Send publishes events in order at the bridge's QoS and returns once the
// broker acknowledged each. An event that cannot be encoded gives an
// error wrapping bridge.ErrRejected.
func (s *sender3) Send(ctx context.Context, events []*cloudevent.Event) error {
	if err := s.conn.await(ctx); err != nil {
		return err
	}
	for _, e := range events {
		var m Message
		if err := Encode(&m, s.cfg.Format, e, false); err != nil {
			return fmt.Errorf("%w: %w", bridge.ErrRejected, err)
		}
		if err := wait(ctx, s.conn.cli.Publish(s.topic, s.cfg.QoS, s.cfg.Retain, m.Payload)); err != nil {
			return fmt.Errorf("mqtt publish: %w", err)
		}
	}
	return nil
}

// Close disconnects; it is idempotent.
func (s *sender3) Close() error {
	s.conn.close()
	return nil
}

// receiver3 reads one topic filter over MQTT 3.1.1 with a persistent
// session.
type receiver3 struct {
	cfg    *Config
	filter string
	log    *slog.Logger
	conn   *conn3
	inbox  chan paho3.Message
	closed chan struct{}
	once   sync.Once
	ids    *positions
}

// newReceiver3 connects a receiver of filter and subscribes each time the
// connection is up.
func newReceiver3(cfg *Config, filter string, log *slog.Logger) *receiver3 {
	r := &receiver3{cfg: cfg, filter: filter, log: log, inbox: make(chan paho3.Message, inboxSize),
		closed: make(chan struct{}), ids: newPositions()}
	r.conn = dial3(cfg, cfg.clientID("in", filter), log, r.subscribe)
	return r
}

// subscribe subscribes the filter on a connection that just came up.
func (r *receiver3) subscribe(cl paho3.Client) {
	tok := cl.Subscribe(r.filter, r.cfg.QoS, r.received)
	if err := wait(context.Background(), tok); err != nil {
		r.log.Warn("mqtt subscribe failed", "filter", r.filter, "err", err)
	}
}

// received queues a message for Receive; it waits while the inbox is
// full, which stops the client reading from the broker.
func (r *receiver3) received(_ paho3.Client, m paho3.Message) {
	select {
	case r.inbox <- m:
	case <-r.closed:
	}
}

// Receive delivers the messages of the filter in the broker's order and
// acknowledges each once deliver returned nil. A retained message is
// skipped (and acknowledged) unless the bridge passes them. It returns
// when ctx ends, when the connection goes down (ErrDisconnected), or with
// deliver's error.
func (r *receiver3) Receive(ctx context.Context, deliver bridge.Deliver) error {
	return receiveLoop(ctx, r.conn.await, r.conn.down, r.closed, r.inbox, func(pm paho3.Message) error {
		if pm.Retained() && !r.cfg.Retain {
			pm.Ack()
			return nil
		}
		m := Message{Topic: pm.Topic(), QoS: pm.Qos(), Retain: pm.Retained(), Payload: pm.Payload()}
		if err := deliver(ctx, message(&m, r.cfg.Format, r.ids.next(m.Topic), time.Now())); err != nil {
			return err
		}
		pm.Ack()
		return nil
	})
}

// Close disconnects; it is idempotent.
func (r *receiver3) Close() error {
	r.once.Do(func() { close(r.closed) })
	r.conn.close()
	return nil
}
