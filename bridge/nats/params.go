package nats

import "time"

// Limits and timers of the NATS bridge.
const (
	// sendTimeout bounds one Send (flush or publish acknowledgements), so
	// a server that is away makes it fail and the runner retry.
	sendTimeout = 10 * time.Second

	// connectTimeout bounds the connection of a new Sender or Receiver.
	connectTimeout = 5 * time.Second

	// fetchBatch bounds the JetStream messages one fetch returns.
	fetchBatch = 256

	// fetchWait is how long a JetStream fetch waits for messages.
	fetchWait = 500 * time.Millisecond

	// pendingMsgs and pendingBytes bound what a core NATS subscription
	// buffers while the bus takes the messages before; beyond, the client
	// drops (a slow consumer), counted by the server.
	pendingMsgs  = 4096
	pendingBytes = 64 << 20

	// ackWait is how long JetStream waits for an acknowledgement before it
	// delivers a message again.
	ackWait = 30 * time.Second
)
