package amqp1

import "time"

// Limits and timers of the AMQP 1.0 bridges.
const (
	// maxProperties bounds the application properties of a message read
	// in binary mode; a message with more is refused before any is
	// converted.
	maxProperties = 256

	// DefaultCredit is the link credit a receiver grants: the messages the
	// broker sends ahead of the bus taking them.
	DefaultCredit = 64

	// dialTimeout bounds the connection, session and link set-up.
	dialTimeout = 10 * time.Second

	// sendTimeout bounds the wait for the broker's outcome of one message;
	// the runner sends the batch again after it.
	sendTimeout = 30 * time.Second

	// closeTimeout bounds a clean close of a connection.
	closeTimeout = 5 * time.Second
)
