package rsbsocket

import "time"

// Limits and timers of the RSB socket transport. Config fields left at zero
// take these defaults.
const (
	// DefaultPort is the TCP port of the RSB socket transport (RSB option
	// transport.socket.port).
	DefaultPort = 55555

	// DefaultAddr is the listen address of a Server: every local interface,
	// port 55555. RSB socket servers bind all IPv4 interfaces whatever host
	// they are configured with; ":55555" covers IPv4 and, where the system
	// has it, IPv6 as well.
	DefaultAddr = ":55555"

	// DefaultMaxFrameSize bounds one frame body (a serialized Notification).
	// The RSB socket protocol has no cap below 4 GiB; real clients send
	// events of several MiB (8 MiB measured), so 64 MiB leaves room while
	// keeping a hostile length from allocating gigabytes.
	DefaultMaxFrameSize = 64 << 20

	// DefaultQueueFrames bounds the frames waiting in one connection's send
	// queue (including the batch its writer is writing).
	DefaultQueueFrames = 4096

	// DefaultQueueBytes bounds the body bytes waiting in one connection's
	// send queue. A frame is always accepted by an empty queue, so a frame
	// of up to MaxFrameSize can pass even when it exceeds this bound.
	DefaultQueueBytes = 64 << 20

	// DefaultMaxParticipants bounds the introspection participants tracked
	// per connection. Past it the connection falls back to wanting every
	// event, which costs bandwidth but loses nothing.
	DefaultMaxParticipants = 4096

	// DefaultWriteTimeout bounds one write to a client. A client that does
	// not take a batch of frames within it is disconnected.
	DefaultWriteTimeout = 10 * time.Second

	// DefaultHandshakeTimeout bounds the handshake: the server's write of
	// the 4 zero bytes, and a client's wait for them.
	DefaultHandshakeTimeout = 5 * time.Second

	// DefaultShutdownTimeout bounds the orderly shutdown ListenAndServe
	// performs when its context ends, and a ClientConn's wait for the
	// peer's EOF in Close.
	DefaultShutdownTimeout = 5 * time.Second
)

// Internal sizes of the I/O paths.
const (
	// handshakeSize is the length of the server's greeting: 4 zero bytes.
	// The RSB specification's example shows 5, a typo; every implementation
	// sends and expects 4.
	handshakeSize = 4

	// headerSize is the length of a frame header: a little-endian uint32.
	headerSize = 4

	// readBufferSize is the bufio.Reader size of a connection. Bodies
	// larger than it are read straight into their own buffer.
	readBufferSize = 64 << 10

	// eagerAllocMax is the largest body allocated at once from its header.
	// Larger bodies grow as their bytes arrive, so a peer announcing a big
	// frame and then stalling holds only what it actually sent.
	eagerAllocMax = 1 << 20

	// coalesceBytes is the capacity of a writer's scratch buffer: small
	// frames queued together are copied into it and leave in one write.
	coalesceBytes = 64 << 10

	// copyMax is the largest body copied into the scratch buffer; larger
	// bodies are handed to the kernel from their own memory in the same
	// writev, right after their header.
	copyMax = 16 << 10

	// maxBatchVecs bounds the iovecs of one writev.
	maxBatchVecs = 64

	// maxBatchBytes stops adding frames to a writev once this many body
	// bytes are in it, so that one write (bounded by WriteTimeout) stays
	// reasonable for a client that reads slowly but steadily.
	maxBatchBytes = 4 << 20

	// maxParticipantIDLen and maxParticipantScopeLen bound what one tracked
	// participant may hold (RSB ids are 16-byte UUIDs; scopes are short), so
	// MaxParticipants bounds the memory of interest learning.
	maxParticipantIDLen    = 64
	maxParticipantScopeLen = 4096

	// linearInterestMax is the number of interest scopes up to which a
	// connection's interest is matched by a linear scan; above it a set of
	// scopes is probed with the frame scope's super-scopes.
	linearInterestMax = 8
)
