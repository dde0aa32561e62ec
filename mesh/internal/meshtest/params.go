package meshtest

import "time"

// dialTimeout bounds a socket client's connection to the node: generous,
// the host is loaded.
const dialTimeout = 20 * time.Second

// probeWait is how long ReaderReady waits for each probe it publishes,
// and Drain for each event still queued; probes is how many probes
// ReaderReady publishes before it gives up.
const (
	probeWait = 20 * time.Millisecond
	probes    = 200
)
