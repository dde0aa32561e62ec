package amqp091

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rsbd/rsbd/bridge"
)

// receiver consumes one queue as its one consumer, in order.
type receiver struct {
	cfg   *Config
	queue string
	n     atomic.Int64 // numbers messages without a message id

	mu     sync.Mutex
	sess   *session
	closed bool
}

// newReceiver returns the receiver of queue; it connects in Receive.
func newReceiver(cfg *Config, queue string) *receiver {
	r := &receiver{cfg: cfg, queue: queue}
	r.n.Store(time.Now().UnixMicro())
	return r
}

// Receive consumes the queue with an exclusive consumer (one ordered
// reader) and a prefetch window, delivers each message in order and
// acknowledges it once deliver returned nil. It returns when ctx ends,
// the connection closes (ErrDisconnected), or with deliver's error; the
// connection is closed then, so the broker puts the unacknowledged
// messages back in the queue, in their place.
func (r *receiver) Receive(ctx context.Context, deliver bridge.Deliver) error {
	deliveries, err := r.consume(ctx)
	if err != nil {
		return err
	}
	defer r.drop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case d, ok := <-deliveries:
			if !ok {
				return ErrDisconnected
			}
			if err := deliver(ctx, r.convert(&d)); err != nil {
				return err
			}
			if err := d.Ack(false); err != nil {
				return fmt.Errorf("%w: ack: %w", ErrDisconnected, err)
			}
		}
	}
}

// consume connects, declares the queue unless told not to, and starts the
// consumer.
func (r *receiver) consume(ctx context.Context) (<-chan amqp.Delivery, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, bridge.ErrClosed
	}
	sess, err := dial(r.cfg)
	if err != nil {
		return nil, err
	}
	if err := r.setUp(ctx, sess); err != nil {
		sess.close()
		return nil, err
	}
	deliveries, err := sess.ch.ConsumeWithContext(ctx, r.queue, "", false, true, false, false, nil)
	if err != nil {
		sess.close()
		return nil, fmt.Errorf("rabbitmq consume %q: %w", r.queue, err)
	}
	r.sess = sess
	return deliveries, nil
}

// setUp sets the prefetch window and declares the queue.
func (r *receiver) setUp(_ context.Context, sess *session) error {
	if err := sess.ch.Qos(r.cfg.Prefetch, 0, false); err != nil {
		return fmt.Errorf("rabbitmq qos: %w", err)
	}
	if r.cfg.NoDeclare {
		return nil
	}
	return sess.declare(r.queue, r.cfg.Bind)
}

// convert turns a delivery into what the runner delivers.
func (r *receiver) convert(d *amqp.Delivery) bridge.Message {
	pos := r.queue + "-" + strconv.FormatInt(r.n.Add(1), 10)
	if d.MessageId != "" {
		pos = d.MessageId
	}
	in := Delivery{Queue: r.queue, RoutingKey: d.RoutingKey, Redelivered: d.Redelivered, MessageID: d.MessageId,
		Timestamp: d.Timestamp, ContentType: d.ContentType, Headers: d.Headers, Body: d.Body}
	e, err := Decode(&in, r.cfg.Format, pos, time.Now())
	if err != nil {
		return bridge.Message{Reason: bridge.ReasonOf(err), Err: err, Payload: d.Body, Position: pos}
	}
	return bridge.Message{Event: e, Position: pos}
}

// drop closes the session of the Receive that ends.
func (r *receiver) drop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sess.close()
	r.sess = nil
}

// Close closes the connection, which ends Receive; it is idempotent.
func (r *receiver) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.sess.close()
	r.sess = nil
	return nil
}
