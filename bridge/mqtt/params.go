package mqtt

import "time"

// Limits and timers of the MQTT bridges.
const (
	// maxUserProperties bounds the user properties read as attributes of
	// one message: an event has at most cloudevent.MaxAttributes
	// attributes, and a message with more is refused before any is parsed.
	maxUserProperties = 64

	// inboxSize bounds the messages a receiver holds between the client
	// library and the bus: the client's read loop waits when it is full,
	// so a slow bus slows the broker down instead of filling memory. It is
	// also the Receive Maximum an MQTT 5 receiver announces.
	inboxSize = 64

	// connectTimeout bounds one connection attempt.
	connectTimeout = 10 * time.Second

	// keepAlive is the MQTT keep-alive interval, in seconds.
	keepAlive = 20

	// sessionExpiry is how long, in seconds, an MQTT 5 broker keeps a
	// receiver's session (subscription and queued QoS 1 and 2 messages)
	// while it is disconnected.
	sessionExpiry = 3600

	// backoffMin and backoffMax bound the client's wait before it connects
	// again after a failure.
	backoffMin = 100 * time.Millisecond
	backoffMax = 5 * time.Second

	// ackInterval is how often an MQTT 5 client sends the acknowledgements
	// the bridge released, in order.
	ackInterval = 10 * time.Millisecond

	// disconnectTimeout bounds the clean disconnect of Close.
	disconnectTimeout = 5 * time.Second
)

// publishTimeout bounds the wait for one message's acknowledgement; the
// runner sends the batch again after it.
const publishTimeout = 30 * time.Second
