package meshmessage

import "time"

// Limits of the Package codec.
const (
	// MaxPackage bounds a whole Package on the wire, prefix included: the
	// reference's TCP decoder refuses longer frames, so a peer never sends
	// one and a reader never buffers more for one client.
	MaxPackage = 4 << 20
)

// Defaults of the listener's Config.
const (
	// DefaultHeartbeatTimeout closes a client that sent nothing for this
	// long: EventMesh clients heartbeat every half minute or so, so three
	// missed beats mean the client is gone.
	DefaultHeartbeatTimeout = 90 * time.Second
	// DefaultQueueLen bounds the Packages waiting to be written to one
	// client; past it events for the client are dropped and counted, so a
	// slow client never holds up the bus.
	DefaultQueueLen = 1024
	// DefaultWriteTimeout bounds one write to a client; a client that takes
	// longer is closed rather than allowed to pin its queue.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultMaxClients bounds the connections served at once, each of
	// which holds a queue and two goroutines.
	DefaultMaxClients = 1024
)
