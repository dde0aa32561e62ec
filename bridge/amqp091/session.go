package amqp091

import (
	"errors"
	"fmt"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// ErrDisconnected: the connection or channel to the broker closed.
var ErrDisconnected = errors.New("rabbitmq: disconnected from the broker")

// session is one connection and its one channel.
type session struct {
	conn *amqp.Connection
	ch   *amqp.Channel
}

// dial opens a connection and a channel.
func dial(cfg *Config) (*session, error) {
	conn, err := amqp.DialConfig(cfg.URL, amqp.Config{
		Heartbeat: heartbeat,
		Dial:      amqp.DefaultDial(dialTimeout),
		Properties: amqp.Table{
			"connection_name": "rsbd bridge",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("rabbitmq dial: %w", err)
	}
	ch, err := conn.Channel()
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("rabbitmq channel: %w", err)
	}
	return &session{conn: conn, ch: ch}, nil
}

// declare declares queue durable, and binds it as bind says.
func (s *session) declare(queue, bind string) error {
	if _, err := s.ch.QueueDeclare(queue, true, false, false, false, nil); err != nil {
		return fmt.Errorf("rabbitmq declare %q: %w", queue, err)
	}
	if bind == "" {
		return nil
	}
	ex, key, _ := strings.Cut(bind, "/")
	if err := s.ch.QueueBind(queue, key, ex, false, nil); err != nil {
		return fmt.Errorf("rabbitmq bind %q to %q: %w", queue, bind, err)
	}
	return nil
}

// close closes the connection, and its channel with it, waiting at most
// closeTimeout for the broker's answer: a channel closed on its own can
// wait for ever while a consumer's deliveries are not read. A nil session
// is closed.
func (s *session) close() {
	if s == nil {
		return
	}
	_ = s.conn.CloseDeadline(time.Now().Add(closeTimeout))
}
