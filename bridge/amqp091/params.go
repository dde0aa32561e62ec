package amqp091

import "time"

// Limits and timers of the RabbitMQ bridges.
const (
	// maxHeaders bounds the application headers of a message read in
	// binary mode: an event has at most cloudevent.MaxAttributes
	// attributes, and a message with far more headers is refused before
	// any is converted.
	maxHeaders = 256

	// DefaultPrefetch is the number of unacknowledged messages the broker
	// sends a receiver ahead: the bound of what the receiver holds between
	// the broker and the bus.
	DefaultPrefetch = 64

	// dialTimeout bounds the connection set-up.
	dialTimeout = 10 * time.Second

	// heartbeat is the AMQP heartbeat interval: a dead broker is noticed
	// after about twice this.
	heartbeat = 10 * time.Second

	// closeTimeout bounds the wait for the broker's answer to a
	// connection close.
	closeTimeout = 5 * time.Second

	// confirmTimeout bounds the wait for the publisher confirms of one
	// batch; the runner sends the batch again after it.
	confirmTimeout = 30 * time.Second
)
