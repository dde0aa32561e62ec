package mqtt

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// conn5 is an MQTT 5 connection of one side of a bridge; autopaho keeps it
// up, connecting again with backoff after a failure.
type conn5 struct {
	cm   *autopaho.ConnectionManager
	down chan struct{} // 1-buffered: the connection went down
	once sync.Once
}

// dial5 starts the connection manager of client id; onUp runs (in its own
// goroutine) each time a connection is up, and received gets every
// PUBLISH in order when set.
func dial5(cfg *Config, id string, log *slog.Logger, onUp func(*autopaho.ConnectionManager), received func(paho.PublishReceived) (bool, error)) (*conn5, error) {
	c := &conn5{down: make(chan struct{}, 1)}
	user, password := cfg.credentials()
	rm := uint16(inboxSize)
	ac := autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{cfg.serverURL("mqtt")},
		KeepAlive:                     keepAlive,
		CleanStartOnInitialConnection: false,
		SessionExpiryInterval:         sessionExpiry,
		ReconnectBackoff:              backoff,
		ConnectTimeout:                connectTimeout,
		ConnectUsername:               user,
		ConnectPassword:               []byte(password),
		ConnectPacketBuilder: func(p *paho.Connect, _ *url.URL) (*paho.Connect, error) {
			if p.Properties == nil {
				p.Properties = &paho.ConnectProperties{}
			}
			p.Properties.ReceiveMaximum = &rm
			return p, nil
		},
		OnConnectionUp: func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
			if onUp != nil {
				go onUp(cm)
			}
		},
		OnConnectionDown: func() bool {
			select {
			case c.down <- struct{}{}:
			default:
			}
			return true
		},
		OnConnectError: func(err error) { log.Debug("mqtt connect failed", "client", id, "err", err) },
		ClientConfig: paho.ClientConfig{
			ClientID:                   id,
			EnableManualAcknowledgment: received != nil,
			SendAcksInterval:           ackInterval,
		},
	}
	if received != nil {
		ac.OnPublishReceived = []func(paho.PublishReceived) (bool, error){received}
	}
	cm, err := autopaho.NewConnection(context.Background(), ac)
	if err != nil {
		return nil, fmt.Errorf("mqtt: %w", err)
	}
	c.cm = cm
	return c, nil
}

// await waits up to connectTimeout for the connection to be up; it
// returns ErrDisconnected when it is not.
func (c *conn5) await(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	if err := c.cm.AwaitConnection(wctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", ErrDisconnected, err)
	}
	return nil
}

// close disconnects; it is idempotent.
func (c *conn5) close() error {
	var err error
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), disconnectTimeout)
		defer cancel()
		err = c.cm.Disconnect(ctx)
	})
	return err
}

// sender5 publishes events to one topic over MQTT 5.
type sender5 struct {
	cfg   *Config
	topic string
	conn  *conn5
}

// newSender5 connects a sender of topic.
func newSender5(cfg *Config, topic string, log *slog.Logger) (*sender5, error) {
	c, err := dial5(cfg, cfg.clientID("out", topic), log, nil, nil)
	if err != nil {
		return nil, err
	}
	return &sender5{cfg: cfg, topic: topic, conn: c}, nil
}

// Send publishes events in order, each at the bridge's QoS, and returns
// once the broker acknowledged each (PUBACK at QoS 1, PUBCOMP at QoS 2).
// An event that cannot be encoded, or that the broker refuses with a
// reason code, gives an error wrapping bridge.ErrRejected.
func (s *sender5) Send(ctx context.Context, events []*cloudevent.Event) error {
	if err := s.conn.await(ctx); err != nil {
		return err
	}
	for _, e := range events {
		var m Message
		if err := Encode(&m, s.cfg.Format, e, true); err != nil {
			return fmt.Errorf("%w: %w", bridge.ErrRejected, err)
		}
		pctx, cancel := context.WithTimeout(ctx, publishTimeout)
		resp, err := s.conn.cm.Publish(pctx, s.publish(&m))
		cancel()
		if err != nil {
			return fmt.Errorf("mqtt publish: %w", err)
		}
		if resp != nil && resp.ReasonCode >= 0x80 {
			return fmt.Errorf("%w: mqtt reason code %#x", bridge.ErrRejected, resp.ReasonCode)
		}
	}
	return nil
}

// publish returns the PUBLISH packet of m.
func (s *sender5) publish(m *Message) *paho.Publish {
	p := &paho.Publish{Topic: s.topic, QoS: s.cfg.QoS, Retain: s.cfg.Retain, Payload: m.Payload,
		Properties: &paho.PublishProperties{ContentType: m.ContentType}}
	for _, u := range m.User {
		p.Properties.User = append(p.Properties.User, paho.UserProperty{Key: u.Key, Value: u.Value})
	}
	return p
}

// Close disconnects; it is idempotent.
func (s *sender5) Close() error { return s.conn.close() }

// received5 is a PUBLISH and the client that got it, which acknowledges
// it.
type received5 struct {
	pub *paho.Publish
	cli *paho.Client
}

// receiver5 reads one topic filter over MQTT 5 with a persistent session.
type receiver5 struct {
	cfg    *Config
	filter string
	log    *slog.Logger
	conn   *conn5
	inbox  chan received5
	closed chan struct{}
	once   sync.Once
	ids    *positions
}

// newReceiver5 connects a receiver of filter and subscribes each time the
// connection is up.
func newReceiver5(cfg *Config, filter string, log *slog.Logger) (*receiver5, error) {
	r := &receiver5{cfg: cfg, filter: filter, log: log, inbox: make(chan received5, inboxSize),
		closed: make(chan struct{}), ids: newPositions()}
	c, err := dial5(cfg, cfg.clientID("in", filter), log, r.subscribe, r.received)
	if err != nil {
		return nil, err
	}
	r.conn = c
	return r, nil
}

// subscribe subscribes the filter on a connection that just came up. A
// retaining bridge asks for retained messages only when the subscription
// is new, so a reconnect does not read them twice, and keeps their retain
// flag; any other bridge never gets them.
func (r *receiver5) subscribe(cm *autopaho.ConnectionManager) {
	opt := paho.SubscribeOptions{Topic: r.filter, QoS: r.cfg.QoS, RetainHandling: 2}
	if r.cfg.Retain {
		opt.RetainHandling, opt.RetainAsPublished = 1, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if _, err := cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{opt}}); err != nil {
		r.log.Warn("mqtt subscribe failed", "filter", r.filter, "err", err)
	}
}

// received queues a PUBLISH for Receive; it waits while the inbox is full,
// which stops the client reading from the broker.
func (r *receiver5) received(pr paho.PublishReceived) (bool, error) {
	select {
	case r.inbox <- received5{pr.Packet, pr.Client}:
	case <-r.closed:
	}
	return true, nil
}

// Receive delivers the messages of the filter in the broker's order and
// acknowledges each once deliver returned nil. It returns when ctx ends,
// when the connection goes down (ErrDisconnected: the broker keeps the
// session and gives the unacknowledged messages again), or with deliver's
// error.
func (r *receiver5) Receive(ctx context.Context, deliver bridge.Deliver) error {
	return receiveLoop(ctx, r.conn.await, r.conn.down, r.closed, r.inbox, func(m received5) error {
		if err := deliver(ctx, r.convert(m.pub)); err != nil {
			return err
		}
		if m.pub.QoS > 0 {
			// An acknowledgement on a connection that is gone fails; the
			// broker gives the message again on the next one.
			_ = m.cli.Ack(m.pub)
		}
		return nil
	})
}

// convert turns a PUBLISH into what the runner delivers.
func (r *receiver5) convert(p *paho.Publish) bridge.Message {
	m := Message{Topic: p.Topic, QoS: p.QoS, Retain: p.Retain, Payload: p.Payload}
	if p.Properties != nil {
		m.ContentType = p.Properties.ContentType
		for _, u := range p.Properties.User {
			m.User = append(m.User, UserProperty{u.Key, u.Value})
		}
	}
	return message(&m, r.cfg.Format, r.ids.next(m.Topic), time.Now())
}

// Close disconnects; it is idempotent.
func (r *receiver5) Close() error {
	r.once.Do(func() { close(r.closed) })
	return r.conn.close()
}

// message converts m for the runner: the event, or why there is none.
func message(m *Message, f bridge.Format, id string, at time.Time) bridge.Message {
	e, err := Decode(m, f, id, at)
	if err != nil {
		return bridge.Message{Reason: bridge.ReasonOf(err), Err: err, Payload: m.Payload, Position: id}
	}
	return bridge.Message{Event: e, Position: id}
}

// backoff is the wait before connection attempt n: doubling from
// backoffMin up to backoffMax.
func backoff(n int) time.Duration {
	d := backoffMin
	for i := 0; i < n && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}
