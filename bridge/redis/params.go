package redis

import "time"

// Limits and timers of the Redis bridge.
const (
	// sendTimeout bounds one Send, so a server that is away makes it fail
	// and the runner retry.
	sendTimeout = 10 * time.Second

	// connectTimeout bounds the check that a new Sender or Receiver reaches
	// the server.
	connectTimeout = 5 * time.Second

	// readCount bounds the entries one XREADGROUP returns.
	readCount = 256

	// readBlock is how long an XREADGROUP waits for entries.
	readBlock = 500 * time.Millisecond
)
