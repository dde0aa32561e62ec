package kafka

import "time"

// Limits and timers of the Kafka bridge.
const (
	// sendTimeout bounds one Send: a broker that does not acknowledge in
	// this time makes it fail, so the runner counts a retry and reports
	// the route down instead of waiting without end.
	sendTimeout = 10 * time.Second

	// maxPoll bounds the records one poll hands to the bridge, and so the
	// records delivered between two commits.
	maxPoll = 512

	// pingTimeout bounds the reachability check of a new Sender or
	// Receiver.
	pingTimeout = 5 * time.Second

	// fetchMaxWait is how long a fetch waits for records on the broker:
	// short, so a new record crosses soon.
	fetchMaxWait = 100 * time.Millisecond

	// maxBuffered bounds the records the producer buffers: the runner
	// sends one batch at a time, so this is a batch with room.
	maxBuffered = 4096
)
