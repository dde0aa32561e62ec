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
	// longer is closed as a slow consumer rather than allowed to pin its
	// queue.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultMaxClients bounds the connections served at once, each of
	// which holds a queue and two goroutines.
	DefaultMaxClients = 1024
	// DefaultRequestTimeout bounds a request, either way, whose message
	// sets no time to live: the RSB call of a REQUEST_TO_SERVER, and the
	// client's RESPONSE_TO_SERVER to a REQUEST_TO_CLIENT. It matches the
	// RSB client's default call timeout.
	DefaultRequestTimeout = 25 * time.Second
	// DefaultMaxRequests bounds the requests in flight per client and per
	// direction: each REQUEST_TO_SERVER holds a goroutine until its
	// answer, each REQUEST_TO_CLIENT an entry waiting for the response.
	DefaultMaxRequests = 64
)

// Limits of the listener.
const (
	// MaxRequestTimeout bounds the time to live a request's message may
	// ask for, so a client cannot pin a goroutine for longer.
	MaxRequestTimeout = 5 * time.Minute
	// maxRemoteServers bounds the RSB remote servers the listener keeps
	// for the scopes clients call; a call to a scope past the bound uses a
	// remote server of its own, closed after the call.
	maxRemoteServers = 256
	// readBuffer is the size of each client's read buffer: small messages
	// and their prefixes arrive in one read.
	readBuffer = 16 << 10
)
