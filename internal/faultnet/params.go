package faultnet

// Limits and defaults of the in-memory network.
const (
	// DefaultQueueLimit bounds the datagrams waiting for one endpoint's
	// Handler (like a socket receive buffer); more are dropped and counted.
	DefaultQueueLimit = 4096

	// DefaultPort is the port of addresses assigned by Listen.
	DefaultPort = 5000

	// maxBatch bounds the datagrams handed to the Handler in one call.
	maxBatch = 64
)
