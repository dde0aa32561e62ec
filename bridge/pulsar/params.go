package pulsar

import "time"

// Limits and timers of the Pulsar bridges.
const (
	// maxProperties bounds the properties of a message read in binary
	// mode; a message with more is refused before any is converted.
	maxProperties = 256

	// ReceiverQueueSize is the consumer's receiver queue: the messages the
	// broker sends ahead of the bus taking them.
	ReceiverQueueSize = 64

	// operationTimeout bounds the client's requests (producer and consumer
	// creation, lookups).
	operationTimeout = 30 * time.Second

	// connectionTimeout bounds the TCP connection to a broker.
	connectionTimeout = 10 * time.Second
)
