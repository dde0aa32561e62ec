package nats

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// Options of a NATS bridge's section.
const (
	optJetStream = "jetstream" // true: through JetStream
	optDurable   = "durable"   // durable consumer of the inbound route
)

func init() { bridge.Register(kind, New) }

// Broker is a NATS server (or cluster) as a bridge sees it.
type Broker struct {
	url       string
	format    bridge.Format
	jetstream bool
	durable   string
	name      string
}

// New is the Factory of kind "nats".
func New(s bridge.Settings) (bridge.Broker, error) {
	if err := s.CheckOptions(optJetStream, optDurable); err != nil {
		return nil, err
	}
	f, err := s.CheckFormat(bridge.FormatBinary, bridge.FormatBinary, bridge.FormatStructured, bridge.FormatRaw, bridge.FormatFrame)
	if err != nil {
		return nil, err
	}
	js, err := strconv.ParseBool(s.Option(optJetStream, "false"))
	if err != nil {
		return nil, fmt.Errorf("%w: nats bridge %s: jetstream is true or false", bridge.ErrSettings, s.Name)
	}
	if s.URL == "" {
		return nil, fmt.Errorf("%w: nats bridge %s: no url", bridge.ErrSettings, s.Name)
	}
	return &Broker{url: s.URL, format: f, jetstream: js, durable: s.Option(optDurable, "rsbd-"+s.Name), name: s.Name}, nil
}

// connect opens a connection; the runner makes a new one after a failure,
// so the client's own reconnection is bounded by the timeout of a Send.
func (b *Broker) connect() (*nats.Conn, error) {
	nc, err := nats.Connect(b.url, nats.Name("rsbd-bridge-"+b.name), nats.Timeout(connectTimeout))
	if err != nil {
		return nil, fmt.Errorf("nats: connect: %w", err)
	}
	return nc, nil
}

// stream returns the JetStream stream of subject, made when absent.
func (b *Broker) stream(ctx context.Context, nc *nats.Conn, subject string) (jetstream.JetStream, jetstream.Stream, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	name := streamName(subject)
	st, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		st, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject}, Storage: jetstream.FileStorage})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("nats: stream %s: %w", name, err)
	}
	return js, st, nil
}

// NewSender returns a publisher to subject.
func (b *Broker) NewSender(ctx context.Context, subject string) (bridge.Sender, error) {
	nc, err := b.connect()
	if err != nil {
		return nil, err
	}
	s := &sender{nc: nc, subject: subject, format: b.format}
	if b.jetstream {
		if s.js, _, err = b.stream(ctx, nc, subject); err != nil {
			nc.Close()
			return nil, err
		}
	}
	return s, nil
}

// NewReceiver returns a subscriber of subject: a durable pull consumer in
// JetStream, a subscription on core NATS.
func (b *Broker) NewReceiver(ctx context.Context, subject string) (bridge.Receiver, error) {
	nc, err := b.connect()
	if err != nil {
		return nil, err
	}
	r := &receiver{nc: nc, format: b.format}
	if !b.jetstream {
		r.sub, err = nc.SubscribeSync(subject)
		if err == nil {
			err = r.sub.SetPendingLimits(pendingMsgs, pendingBytes)
		}
		if err == nil {
			err = nc.FlushTimeout(connectTimeout) // the server has the subscription
		}
	} else {
		var st jetstream.Stream
		if _, st, err = b.stream(ctx, nc, subject); err == nil {
			cctx, cancel := context.WithTimeout(ctx, connectTimeout)
			r.cons, err = st.CreateOrUpdateConsumer(cctx, jetstream.ConsumerConfig{Durable: b.durable,
				AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait, MaxAckPending: fetchBatch})
			cancel()
		}
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("nats: subscribe %s: %w", subject, err)
	}
	return r, nil
}

// Close has nothing to release: each Sender and Receiver owns its
// connection.
func (b *Broker) Close() error { return nil }

// sender publishes to one subject.
type sender struct {
	nc      *nats.Conn
	js      jetstream.JetStream // nil: core NATS
	subject string
	format  bridge.Format
	once    sync.Once
}

// Send publishes the events: in JetStream each acknowledged by the stream,
// on core NATS all flushed to the server.
func (s *sender) Send(ctx context.Context, events []*cloudevent.Event) error {
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	futures := make([]jetstream.PubAckFuture, 0, len(events))
	for _, e := range events {
		m, err := encode(s.format, s.subject, e)
		if err != nil {
			return fmt.Errorf("%w: %w", bridge.ErrRejected, err)
		}
		if s.js == nil {
			err = s.nc.PublishMsg(m)
		} else {
			var f jetstream.PubAckFuture
			if f, err = s.js.PublishMsgAsync(m); err == nil {
				futures = append(futures, f)
			}
		}
		if errors.Is(err, nats.ErrMaxPayload) {
			return fmt.Errorf("%w: %w", bridge.ErrRejected, err)
		}
		if err != nil {
			return err
		}
	}
	if s.js == nil {
		return s.nc.FlushWithContext(ctx)
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Probe checks that the server answers.
func (s *sender) Probe(context.Context) error { return s.nc.FlushTimeout(connectTimeout) }

// Close closes the connection.
func (s *sender) Close() error {
	s.once.Do(s.nc.Close)
	return nil
}

// receiver reads one subject.
type receiver struct {
	nc     *nats.Conn
	sub    *nats.Subscription // core NATS
	cons   jetstream.Consumer // JetStream
	once   sync.Once
	format bridge.Format
}

// Receive delivers messages in order until ctx ends or the connection
// fails; JetStream messages are acknowledged after the bus took them.
func (r *receiver) Receive(ctx context.Context, deliver bridge.Deliver) error {
	if r.cons != nil {
		return r.receiveJS(ctx, deliver)
	}
	for {
		m, err := r.sub.NextMsgWithContext(ctx)
		if err != nil {
			return err
		}
		if err := deliver(ctx, decode(r.format, m, position{at: time.Now()})); err != nil {
			return err
		}
	}
}

// receiveJS fetches batches from the durable consumer.
func (r *receiver) receiveJS(ctx context.Context, deliver bridge.Deliver) error {
	for ctx.Err() == nil {
		if r.nc.IsClosed() || !r.nc.IsConnected() {
			return fmt.Errorf("nats: %w", nats.ErrConnectionClosed)
		}
		batch, err := r.cons.Fetch(fetchBatch, jetstream.FetchMaxWait(fetchWait))
		if err != nil {
			return err
		}
		for m := range batch.Messages() {
			p := position{}
			if md, err := m.Metadata(); err == nil {
				p = position{stream: md.Stream, seq: md.Sequence.Stream, at: md.Timestamp}
			}
			nm := &nats.Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()}
			if err := deliver(ctx, decode(r.format, nm, p)); err != nil {
				return err
			}
			if err := m.Ack(); err != nil {
				return err
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
	return ctx.Err()
}

// Close closes the connection.
func (r *receiver) Close() error {
	r.once.Do(r.nc.Close)
	return nil
}
