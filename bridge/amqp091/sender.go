package amqp091

import (
	"context"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// sender publishes events to an exchange and routing key, or to a queue,
// with publisher confirms.
type sender struct {
	cfg           *Config
	exchange, key string
	queue         bool

	mu     sync.Mutex // serialises Send and Close
	sess   *session   // nil until the first Send, and after a failure
	closed bool
}

// newSender returns the sender of address (ParseAddress); it connects on
// the first Send.
func newSender(cfg *Config, address string) *sender {
	ex, key, queue := ParseAddress(address)
	return &sender{cfg: cfg, exchange: ex, key: key, queue: queue}
}

// Send publishes events in order as persistent messages and returns once
// the broker confirmed every one (publisher confirms). A nack, a closed
// connection or a timeout gives an error; the connection is then opened
// again on the next Send. An event that cannot be encoded gives an error
// wrapping bridge.ErrRejected before anything is published.
func (s *sender) Send(ctx context.Context, events []*cloudevent.Event) error {
	msgs := make([]amqp.Publishing, len(events))
	for i, e := range events {
		p, err := Encode(s.cfg.Format, e)
		if err != nil {
			return fmt.Errorf("%w: event %d: %w", bridge.ErrRejected, i, err)
		}
		msgs[i] = p
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return bridge.ErrClosed
	}
	if err := s.connect(); err != nil {
		return err
	}
	if err := s.publish(ctx, msgs); err != nil {
		s.sess.close()
		s.sess = nil
		return err
	}
	return nil
}

// connect opens the session in confirm mode and declares the queue of a
// queue address.
func (s *sender) connect() error {
	if s.sess != nil && !s.sess.ch.IsClosed() {
		return nil
	}
	s.sess.close()
	s.sess = nil
	sess, err := dial(s.cfg)
	if err != nil {
		return err
	}
	if err := sess.ch.Confirm(false); err != nil {
		sess.close()
		return fmt.Errorf("rabbitmq confirm mode: %w", err)
	}
	if s.queue && !s.cfg.NoDeclare {
		if err := sess.declare(s.key, ""); err != nil {
			sess.close()
			return err
		}
	}
	s.sess = sess
	return nil
}

// publish publishes msgs and waits for their confirms.
func (s *sender) publish(ctx context.Context, msgs []amqp.Publishing) error {
	ctx, cancel := context.WithTimeout(ctx, confirmTimeout)
	defer cancel()
	confirms := make([]*amqp.DeferredConfirmation, len(msgs))
	for i := range msgs {
		dc, err := s.sess.ch.PublishWithDeferredConfirmWithContext(ctx, s.exchange, s.key, false, false, msgs[i])
		if err != nil {
			return fmt.Errorf("rabbitmq publish: %w", err)
		}
		confirms[i] = dc
	}
	for i, dc := range confirms {
		ok, err := dc.WaitContext(ctx)
		if err != nil {
			return fmt.Errorf("rabbitmq confirm of message %d: %w", i, err)
		}
		if !ok {
			return fmt.Errorf("rabbitmq: message %d not confirmed (nack)", i)
		}
	}
	return nil
}

// Close closes the connection; it is idempotent.
func (s *sender) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.sess.close()
	s.sess = nil
	return nil
}
