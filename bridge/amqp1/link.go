package amqp1

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/Azure/go-amqp"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// ErrDisconnected: the connection, session or link to the broker closed.
var ErrDisconnected = errors.New("amqp: disconnected from the broker")

// ErrNotAccepted: the broker settled a message the sender sent with an
// outcome other than accepted.
var ErrNotAccepted = errors.New("amqp: message not accepted by the broker")

// conn is a connection and its one session.
type conn struct {
	c *amqp.Conn
	s *amqp.Session
}

// dial opens a connection (SASL PLAIN with the URL's user) and a session.
func dial(ctx context.Context, url string) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := amqp.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("amqp dial: %w", err)
	}
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("amqp session: %w", err)
	}
	return &conn{c: c, s: s}, nil
}

// close closes the connection; a nil conn is closed.
func (c *conn) close() {
	if c == nil {
		return
	}
	done := make(chan struct{})
	go func() { _ = c.c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeTimeout):
	}
}

// sender sends events to one address, each settled by the broker.
type sender struct {
	cfg     *Config
	address string

	mu     sync.Mutex
	conn   *conn
	link   *amqp.Sender
	closed bool
}

// Send sends events in order and returns once the broker accepted every
// one (unsettled transfers: Send waits for each outcome). Any other
// outcome (ErrNotAccepted), a timeout or a lost connection fails the
// Send, and the next one connects again. An event that cannot be encoded gives an error wrapping
// bridge.ErrRejected before anything is sent.
func (s *sender) Send(ctx context.Context, events []*cloudevent.Event) error {
	msgs := make([]*amqp.Message, len(events))
	for i, e := range events {
		m, err := Encode(s.cfg.Format, e)
		if err != nil {
			return fmt.Errorf("%w: event %d: %w", bridge.ErrRejected, i, err)
		}
		msgs[i] = m
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return bridge.ErrClosed
	}
	if err := s.connect(ctx); err != nil {
		return err
	}
	for i, m := range msgs {
		sctx, cancel := context.WithTimeout(ctx, sendTimeout)
		err := s.send(sctx, m)
		cancel()
		if err != nil {
			s.conn.close()
			s.conn, s.link = nil, nil
			return fmt.Errorf("amqp send of message %d: %w", i, err)
		}
	}
	return nil
}

// send sends m and waits for the broker's outcome, which must be
// accepted: go-amqp's Send takes released and modified for success.
func (s *sender) send(ctx context.Context, m *amqp.Message) error {
	receipt, err := s.link.SendWithReceipt(ctx, m, nil)
	if err != nil {
		return err
	}
	state, err := receipt.Wait(ctx)
	if err != nil {
		return err
	}
	return outcome(state)
}

// outcome returns nil for an accepted message and ErrNotAccepted, saying
// what the broker did, for any other outcome: a rejected, released or
// modified message is not on the broker, and the runner sends it again.
func outcome(state amqp.DeliveryState) error {
	switch st := state.(type) {
	case *amqp.StateAccepted:
		return nil
	case *amqp.StateRejected:
		if st.Error != nil {
			return fmt.Errorf("%w: rejected: %w", ErrNotAccepted, st.Error)
		}
		return fmt.Errorf("%w: rejected", ErrNotAccepted)
	case *amqp.StateReleased:
		return fmt.Errorf("%w: released", ErrNotAccepted)
	case *amqp.StateModified:
		return fmt.Errorf("%w: modified", ErrNotAccepted)
	default:
		return fmt.Errorf("%w: outcome %T", ErrNotAccepted, state)
	}
}

// connect opens the connection and the link when there is none.
func (s *sender) connect(ctx context.Context) error {
	if s.link != nil {
		return nil
	}
	c, err := dial(ctx, s.cfg.URL)
	if err != nil {
		return err
	}
	lctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	l, err := c.s.NewSender(lctx, s.address, nil)
	if err != nil {
		c.close()
		return fmt.Errorf("amqp sender link to %q: %w", s.address, err)
	}
	s.conn, s.link = c, l
	return nil
}

// Close closes the connection; it is idempotent.
func (s *sender) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.conn.close()
	s.conn, s.link = nil, nil
	return nil
}

// receiver reads one address over one link, in order.
type receiver struct {
	cfg     *Config
	address string
	n       atomic.Int64 // numbers messages without a message id

	mu     sync.Mutex
	conn   *conn
	closed bool
}

// Receive reads the address with a link of the bridge's credit, delivers
// each message in order and accepts it once deliver returned nil. It
// returns when ctx ends, the link fails (ErrDisconnected), the broker
// overruns the credit (ErrCreditExceeded), or with deliver's error; it
// closes its connection then, so the broker gives the unaccepted messages
// again. The receiver grants credit itself, a window at a time (window).
func (r *receiver) Receive(ctx context.Context, deliver bridge.Deliver) error {
	link, err := r.open(ctx)
	if err != nil {
		return err
	}
	defer r.drop()
	w := newWindow(r.cfg.Credit)
	if err := link.IssueCredit(w.open()); err != nil {
		return fmt.Errorf("%w: credit: %w", ErrDisconnected, err)
	}
	var next *amqp.Message
	for {
		m := next
		if m == nil {
			if m, err = link.Receive(ctx, nil); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("%w: %w", ErrDisconnected, err)
			}
		}
		if next, err = r.credit(link, w); err != nil {
			return err
		}
		if err := deliver(ctx, r.convert(m)); err != nil {
			return err
		}
		if err := link.AcceptMessage(ctx, m); err != nil {
			return fmt.Errorf("%w: accept: %w", ErrDisconnected, err)
		}
	}
}

// credit counts a message read on link and grants the next window once
// the broker sent the whole last one. A message already waiting then is
// one the broker sent over its credit: credit returns it, to be read
// next, and grants after it.
func (r *receiver) credit(link *amqp.Receiver, w *window) (*amqp.Message, error) {
	if err := w.received(); err != nil {
		return nil, err
	}
	if !w.exhausted() {
		return nil, nil
	}
	if m := link.Prefetched(); m != nil {
		return m, nil
	}
	if err := link.IssueCredit(w.refill()); err != nil {
		return nil, fmt.Errorf("%w: credit: %w", ErrDisconnected, err)
	}
	return nil, nil
}

// open connects and attaches the receiving link.
func (r *receiver) open(ctx context.Context) (*amqp.Receiver, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, bridge.ErrClosed
	}
	c, err := dial(ctx, r.cfg.URL)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	l, err := c.s.NewReceiver(lctx, r.address, &amqp.ReceiverOptions{Credit: manualCredit})
	if err != nil {
		c.close()
		return nil, fmt.Errorf("amqp receiver link from %q: %w", r.address, err)
	}
	r.conn = c
	return l, nil
}

// convert turns a message into what the runner delivers.
func (r *receiver) convert(m *amqp.Message) bridge.Message {
	pos := MessageID(m)
	if pos == "" {
		pos = r.address + "-" + strconv.FormatInt(r.n.Add(1), 10)
	}
	body, _ := Body(m)
	e, err := Decode(m, r.address, r.cfg.Format, pos, time.Now())
	if err != nil {
		return bridge.Message{Reason: bridge.ReasonOf(err), Err: err, Payload: body, Position: pos}
	}
	return bridge.Message{Event: e, Position: pos}
}

// drop closes the connection of the Receive that ends.
func (r *receiver) drop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conn.close()
	r.conn = nil
}

// Close closes the connection, which ends Receive; it is idempotent.
func (r *receiver) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.conn.close()
	r.conn = nil
	return nil
}
