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

	// DefaultQueueFrames bounds the frames waiting in one connection's send
	// queue (including the batch its writer is writing). The byte bound,
	// which charges every frame FrameOverhead besides its body, is the
	// memory bound and binds first: 64 MiB hold at most 750 000 of the
	// smallest notifications (26 bytes). The frame bound is only a cap a
	// configuration may lower.
	DefaultQueueFrames = 1 << 20

	// DefaultQueueBytes bounds what the frames waiting in one connection's
	// send queue cost: their body bytes plus FrameOverhead each. A frame is
	// always accepted by an empty queue, so a frame of up to MaxFrameSize
	// can pass even when it exceeds this bound.
	DefaultQueueBytes = 64 << 20

	// FrameOverhead is what a queued frame costs besides its body, charged
	// against the queue's byte bound: its entries in the queue's and the
	// writer's frame lists (24 bytes each) and its allocation's rounding.
	// With it the byte bound bounds memory however small the frames are,
	// and a caller that reserves room for what may still arrive
	// (BackloggedWithin) reserves it in the same measure.
	FrameOverhead = 64

	// DefaultStallTimeout bounds how long the reader of a publishing client
	// waits for room in the queue of a subscriber at its high watermark.
	// A subscriber that is reading takes a write (at most 64 KiB of small
	// frames or 256 KiB of large ones) well within it; one that is not is
	// marked stalled, and its frames are dropped without waiting until
	// it drains again, so a stalled client costs the others one
	// StallTimeout, not one per frame.
	DefaultStallTimeout = 100 * time.Millisecond

	// DefaultMaxConnections bounds the connections served at once; one
	// more is closed as soon as it is accepted, before the handshake, and
	// counted (Stats.ConnsRefused). An idle connection costs the daemon
	// about 7 KB (heap and its reader's stack), so the bound keeps a local
	// program that opens connections without end below about 120 MB.
	DefaultMaxConnections = 16384

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
	// readBufferSize is the bufio.Reader size of a ClientConn and of a busy
	// server connection. Bodies larger than the buffer are read straight
	// into their own memory.
	readBufferSize = 64 << 10

	// readBufferMin is the bufio.Reader size a server connection starts
	// with, so that an idle client costs little (it holds the buffer while
	// it waits; an introspection Hello is a few hundred bytes). Once
	// readUpgradeBytes of frames smaller than readBufferSize have arrived,
	// the connection is busy and gets readBufferSize, which reads many
	// frames per system call.
	readBufferMin    = 512
	readUpgradeBytes = 256 << 10

	// queueHighPercent and queueLowPercent place a send queue's watermarks,
	// in percent of its frame and byte bounds. Forwarding a client's frame
	// waits (up to StallTimeout) while the target queue is above the high
	// watermark; the quarter above it is kept for frames from the network,
	// which never wait and are dropped only at the bounds. A stalled queue
	// is waited for again once its writer has drained it to the low
	// watermark.
	queueHighPercent = 75
	queueLowPercent  = 50

	// keepBatchCap is the capacity of a queue's frame list (and of its
	// writer's batch) kept for reuse once the queue has run dry; longer
	// lists, left from a burst, are let go.
	keepBatchCap = 1024

	// queueBlock is the number of frames per block of a send queue's
	// backlog (24 bytes each): enough small frames for several writes of
	// sockio.MaxBatchBytes, so that a writer taking one block at a time still
	// writes full batches, and within keepBatchCap, so that a block goes
	// back to the pool of frame lists once written.
	queueBlock = keepBatchCap

	// keepIdleCap is the capacity of the frame list an idle queue keeps
	// (24 bytes an entry): a longer one, grown by a burst, is let go when
	// the last owner lets go.
	keepIdleCap = 16

	// heldFramesMax bounds a run of introspection frames learnt together
	// before their interest takes effect and the Handler sees them.
	heldFramesMax = 1024

	// heldGrowAfter: a connection that sends this many introspection
	// frames in a row that change its participants moves to its large read buffer at once, so that
	// the rest of the run is learnt in few steps.
	heldGrowAfter = 8

	// keepTargetsCap is the capacity of a reader's lists of forwarding
	// targets kept for the next frame; a wider fan-out (an introspection
	// Hello reaches every connection) allocates its lists anew, so that
	// every connection of a thousand does not keep a thousand pointers.
	keepTargetsCap = 64

	// routeScopeMax is the longest scope whose targets a reader remembers
	// for the next frame (forwarding.route): longer ones are looked up
	// anew.
	routeScopeMax = 256

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

// Flushing of forwarded frames.
const (
	// flushBytes and flushTargetsMax: a reader forwarding a run of frames
	// flushes its targets (writes their frames on its own goroutine, or
	// starts their writers) once it has no whole frame left to read, or
	// sooner once it has forwarded flushBytes since its last flush or to
	// flushTargetsMax connections. One flush per read of readBufferSize
	// gives a busy subscriber one write per read of its publisher.
	flushBytes      = readBufferSize
	flushTargetsMax = 1024

	// directTargetsMax is the most targets a flush writes on the
	// reader's own goroutine; a flush to more starts their writers
	// instead. Every write to a loopback socket also wakes its reader in
	// the kernel (20-40 us on a 2-core VM), so a reader writing to
	// hundreds of subscribers one after the other is slower than their
	// writers on both cores.
	directTargetsMax = 8

	// directRounds bounds how often a flushing reader takes a target's
	// queue again when frames keep coming in while it writes; then a
	// writer goroutine takes over, so a reader never writes for a busy
	// target for long.
	directRounds = 2
)

// Polling for an answer (spin.go).
const (
	// DefaultSpinWait is how long a reader that relayed a frame to one
	// connection which answers relays polls for that answer before it
	// parks. Parking costs a wake-up of the daemon when the answer comes;
	// when the other CPU is idle that is an inter-processor interrupt,
	// which on a virtual machine costs 20-40 us, on top of the wake-ups of
	// the two clients. How soon a client answers is mostly how soon its
	// own CPU wakes: 25-60 us on the 2-core VM of docs/BENCHMARKS.md, where
	// polling for 30 us left a request/reply round trip through the daemon
	// at 80 us and 100 us brought it to 50 us. A relay that is not
	// answered costs at most this much CPU, and a connection that once
	// answers later than this is not polled for again until it has
	// answered in time twice (answersMin).
	//
	// A poll also holds a CPU that the answering client may have been woken
	// onto (a socket write wakes its reader as if the writer were about to
	// sleep); that client then runs only once the poll gives up, so the
	// slowest round trips take the whole poll. Polls of 250 us put the 99th
	// percentile of a round trip through the daemon at 336-415 us against
	// NATS's 263-370, and 100 us at 230-279 us, with the median at 61-86 us
	// against 66-77 (a 4 Dec host of docs/BENCHMARKS.md, 10 and 3 runs of
	// `--only daemon,nats`, both sizes). On the slower host of 1-2 Dec,
	// 100 us caught the answer in 52-77 % of the polls and 250 us in
	// 87-95 %, with the median round trip at 128-218 us against 112-161,
	// and the 99th percentile at 646-658 us with 250 us against NATS's
	// 484-507. The tail counts for a bus that carries control loops: 100 us.
	DefaultSpinWait = 100 * time.Microsecond

	// MaxSpinWait bounds Config.SpinWait.
	MaxSpinWait = 10 * time.Millisecond

	// answersMin is how many relays in a row a connection must have
	// answered within SpinWait before a reader polls for its answer; a
	// subscriber that only receives never makes a reader poll.
	// answersMax caps the count, so that a connection that stops
	// answering stops costing polls after one miss.
	answersMin = 2
	answersMax = 4

	// answeringMax is the most connections answering relays (answersMin
	// in a row) with which a reader still polls: one conversation, the
	// request's side and the reply's. See spin.go.
	answeringMax = 2
)
