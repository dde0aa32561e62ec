package rsbsocket

import "time"

// Limits and timers of the server. Config fields left at zero take these
// defaults.
const (
	// DefaultPort is the TCP port of the RSB socket transport (RSB option
	// transport.socket.port).
	DefaultPort = 55555

	// DefaultAddr is the listen address of a Server. RSB socket servers
	// bind every IPv4 interface whatever host they are configured with;
	// ":55555" covers IPv4 and, where the system has it, IPv6 as well.
	DefaultAddr = ":55555"

	// DefaultQueueFrames bounds the frames in one connection's send queue,
	// those being written included. The byte bound binds first (64 MiB
	// hold about 750 000 of the smallest notifications with their
	// FrameOverhead), so this is only a cap a configuration may lower.
	DefaultQueueFrames = 1 << 20

	// DefaultQueueBytes bounds what the frames in one connection's send
	// queue cost, their bodies plus FrameOverhead each: the memory one
	// slow client may hold. An empty queue takes any frame, so a frame
	// above this bound still passes.
	DefaultQueueBytes = 64 << 20

	// FrameOverhead is what a queued frame costs besides its body: its
	// entries in the queue's and the writer's frame lists and its
	// allocation's rounding. Charging it makes the byte bound a memory
	// bound however small the frames are, and BackloggedWithin's reserve
	// is counted in the same measure.
	FrameOverhead = 64

	// DefaultStallTimeout bounds how long a publishing client's reader
	// waits for room in a subscriber's queue at its high watermark. A
	// subscriber that reads takes one write well within it; one that does
	// not is marked stalled and costs the others one StallTimeout, not one
	// per frame.
	DefaultStallTimeout = 100 * time.Millisecond

	// DefaultMaxConnections bounds the connections served at once; one
	// more is closed as soon as it is accepted and counted
	// (Stats.ConnsRefused). An idle connection costs a few KB
	// (docs/BENCHMARKS.md), so a program that opens connections without
	// end holds the daemon to about a hundred MB.
	DefaultMaxConnections = 16384

	// DefaultMaxParticipants bounds the introspection participants tracked
	// per connection. Past it the connection wants every event, which
	// costs bandwidth but loses nothing.
	DefaultMaxParticipants = 4096

	// DefaultWriteTimeout bounds one write to a client: a client that
	// takes no batch of frames within it is gone or stuck, and is
	// disconnected.
	DefaultWriteTimeout = 10 * time.Second

	// DefaultHandshakeTimeout bounds the server's write of its greeting,
	// which a live client takes at once.
	DefaultHandshakeTimeout = 5 * time.Second

	// DefaultShutdownTimeout bounds the orderly shutdown ListenAndServe
	// performs when its context ends: time for clients to read what is
	// queued for them, not for a stuck client to hold the daemon.
	DefaultShutdownTimeout = 5 * time.Second
)

// Sizes of the reading and queueing paths.
const (
	// readBufferSize is the bufio.Reader size of a busy connection: it
	// reads many small frames per system call, and a larger body is read
	// straight into its own memory.
	readBufferSize = 64 << 10

	// readBufferMin is the bufio.Reader size a connection starts with, so
	// that an idle client costs little (an introspection Hello is a few
	// hundred bytes). After readUpgradeBytes of frames smaller than
	// readBufferSize the connection is busy and gets readBufferSize.
	readBufferMin    = 512
	readUpgradeBytes = 256 << 10

	// queueHighPercent and queueLowPercent place a send queue's watermarks
	// in percent of its bounds. Forwarding waits above the high one, which
	// leaves the quarter above it to frames from the network; a stalled
	// queue is waited for again once drained to the low one.
	queueHighPercent = 75
	queueLowPercent  = 50

	// keepBatchCap is the capacity of a frame list kept for reuse once a
	// queue has run dry; a longer list, left from a burst, is let go.
	keepBatchCap = 1024

	// queueBlock is the number of frames per block of a send queue's
	// backlog: enough small frames for several writes of
	// sockio.MaxBatchBytes, and within keepBatchCap, so that a written
	// block goes back to the pool of frame lists.
	queueBlock = keepBatchCap

	// keepIdleCap is the capacity of the frame list an idle queue keeps; a
	// longer one, grown by a burst, is let go when the last owner lets go.
	keepIdleCap = 16

	// heldFramesMax bounds a run of introspection frames learnt together
	// before their interest takes effect and the Handler sees them.
	heldFramesMax = 1024

	// heldGrowAfter is how many introspection frames in a row that change
	// a connection's participants move it to its large read buffer at
	// once, so that the rest of the run is learnt in few reads.
	heldGrowAfter = 8

	// keepTargetsCap is the capacity of a reader's target lists kept for
	// the next frame; a wider fan-out (a Hello reaches every connection)
	// allocates its lists anew, so idle connections keep no broadcast's
	// worth of pointers.
	keepTargetsCap = 64

	// routeScopeMax is the longest scope whose targets a reader remembers
	// for the next frame (forwarding.route), so that a reader keeps at most
	// this much of a scope; longer ones are looked up anew.
	routeScopeMax = 256

	// maxParticipantIDLen and maxParticipantScopeLen bound what one tracked
	// participant may hold (RSB ids are 16-byte UUIDs, scopes are short),
	// so that MaxParticipants bounds the memory of interest learning.
	maxParticipantIDLen    = 64
	maxParticipantScopeLen = 4096

	// linearInterestMax is the number of interest scopes up to which a
	// linear scan matches a connection's interest; above it probing a set
	// with the frame scope's super-scopes is cheaper.
	linearInterestMax = 8
)

// Flushing of forwarded frames (direct.go).
const (
	// flushBytes and flushTargetsMax make a reader forwarding a run of
	// frames flush its targets before its buffer runs dry, once it has
	// forwarded flushBytes or reached flushTargetsMax connections. One
	// flush per read gives a busy subscriber one write per read of its
	// publisher.
	flushBytes      = readBufferSize
	flushTargetsMax = 1024

	// directTargetsMax is the most targets a flush writes on the reader's
	// own goroutine; a flush to more starts their writers. Each write to a
	// loopback socket also wakes its reader, so writing to many
	// subscribers in turn is slower than their writers on both cores
	// (BenchmarkRelayOpenLoop).
	directTargetsMax = 8

	// directRounds bounds how often a flushing reader takes a target's
	// queue again when frames keep coming while it writes; then a writer
	// goroutine takes over, so a reader never writes long for a busy
	// target.
	directRounds = 2
)

// Polling for an answer (spin.go).
const (
	// DefaultSpinWait is how long a reader polls for the answer to a relay
	// before it parks: most answers come within it, and a longer poll holds
	// the CPU the answering client needs (docs/TUNING.md).
	DefaultSpinWait = 100 * time.Microsecond

	// MaxSpinWait bounds Config.SpinWait: a relay that is not answered
	// costs its reader up to SpinWait of CPU.
	MaxSpinWait = 10 * time.Millisecond

	// answersMin is how many relays in a row a connection must have
	// answered within SpinWait before a reader polls for its answer, so a
	// subscriber that only receives never makes a reader poll. answersMax
	// caps the count; a late answer resets it.
	answersMin = 2
	answersMax = 4

	// answeringMax is the most connections answering relays with which a
	// reader still polls: one conversation, the request's side and the
	// reply's; with more, the clients need the CPUs (spin.go).
	answeringMax = 2
)
