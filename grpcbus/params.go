package grpcbus

import "time"

// Defaults of Config; each can be changed there.
const (
	// DefaultPrefix is the scope under which services and endpoints live.
	DefaultPrefix = "/grpc/"
	// DefaultInitialWindow is the number of Message frames a receiver
	// grants a sender per stream at its opening. A stream's throughput is
	// at most its window per round trip of a WindowUpdate, and through a
	// daemon that round trip crosses two socket connections and their
	// goroutines: a window of this size keeps a stream of small messages
	// busy there before the receiver has seen any. It is also what a
	// reader that is slow from the start holds per stream (as much again
	// waits on a sender whose writer runs ahead, MaxBufferedWrites).
	DefaultInitialWindow = 256
	// DefaultMaxWindow caps the window a receiver grows to while its
	// reader keeps up: more credit per WindowUpdate round trip for small
	// messages, each window's worth still bounded by DefaultWindowBytes.
	DefaultMaxWindow = 4096
	// DefaultWindowBytes is the byte budget of a stream's window: the
	// receiver keeps no more credits outstanding than this many bytes of
	// messages of the recent size, which bounds what a slow reader holds
	// in bytes as the message cap bounds it in messages.
	DefaultWindowBytes = 4 << 20
	// DefaultMaxStreams bounds the streams one endpoint multiplexes, so a
	// flood of opens cannot grow its stream map without bound; opens past it
	// fail with RESOURCE_EXHAUSTED.
	DefaultMaxStreams = 1000
	// DefaultMaxCalls bounds the unary calls a server runs at once; calls
	// past it are answered RESOURCE_EXHAUSTED.
	DefaultMaxCalls = 1000
	// DefaultPingInterval is how often a client pings each server endpoint
	// it has open streams with.
	DefaultPingInterval = 10 * time.Second
	// DefaultPingTimeout is how long a stream may hear nothing from its
	// peer before it fails with UNAVAILABLE; it must exceed the interval.
	DefaultPingTimeout = 30 * time.Second
	// DefaultMaxPingTimeout caps the ping timeout a client may ask a server
	// to wait for it.
	DefaultMaxPingTimeout = 2 * time.Minute
	// DefaultAckTimeout is how long a unary call waits for its server's
	// acknowledgement before it fails with UNAVAILABLE: long enough for a
	// request to cross hosts and a loaded server to answer, short against a
	// call's usual deadline.
	DefaultAckTimeout = 5 * time.Second
	// DefaultOpenTimeout is how long a stream's opening waits for a
	// server's handshake reply before it fails with UNAVAILABLE. A server
	// replies before it runs the handler, so this is the acknowledgement
	// timeout of streams, as long as DefaultAckTimeout for the same reasons.
	DefaultOpenTimeout = 5 * time.Second
	// DefaultCallTimeout bounds a call whose context has no deadline, so a
	// request nobody answers does not wait forever.
	DefaultCallTimeout = 5 * time.Minute
	// DefaultWireFormat is the wire format a ClientConn uses.
	DefaultWireFormat = WireProto
)

// Internal limits.
const (
	// controlSlack is the room a stream's inbox keeps beyond its window for
	// frames that take no credit (Headers, HalfClose, Trailers).
	controlSlack = 8
	// queuedOverhead is what a received message costs its stream besides
	// its payload, for the window's byte budget: the queue entry, the
	// frame's fields and the event's header.
	queuedOverhead = 64
	// sizeDecay sets how fast the message size the window assumes falls
	// after large messages: by 1/sizeDecay per message taken, so a few
	// dozen small messages undo one large one.
	sizeDecay = 16
	// inboxKeepCap is the capacity of the frame list a drained inbox
	// keeps; a longer one, left from a burst, is let go.
	inboxKeepCap = 256
	// maxPendingReplies bounds the unary calls and handshakes one ClientConn
	// waits for at once; more fail with RESOURCE_EXHAUSTED.
	maxPendingReplies = 4096
	// maxHeaderKeys bounds the metadata entries taken from one event.
	maxHeaderKeys = 256
	// sweepPeriod is how often an endpoint looks for streams whose peer has
	// gone quiet; a fraction of the smallest sensible ping timeout.
	sweepPeriod = 50 * time.Millisecond
	// maxTimeout caps the deadline a request may carry.
	maxTimeout = 24 * time.Hour
)

// maxFrameBytes bounds the frame a decoder accepts: the largest event the
// bus carries is far below it.
const maxFrameBytes = 64 << 20

// pingQueue bounds the pings waiting for the endpoint's goroutine; pings
// past it are dropped and counted (a peer pings once per interval).
const pingQueue = 256

// cancelSendTimeout bounds the sending of a Cancel frame to a peer that may
// be gone.
const cancelSendTimeout = time.Second

// maxWindow bounds the window a peer may grant or ask for: beyond it a
// value is taken as malformed.
const maxWindow = 1 << 20

// maxRejecting bounds the RESOURCE_EXHAUSTED answers a server sends at
// once: a flood of requests past MaxCalls costs dropped requests, not
// goroutines.
const maxRejecting = 64

// frameOverhead is room for a frame's fields besides its payload: tags,
// ids and lengths, each a few bytes.
const frameOverhead = 32

// maxStatusText bounds the status message or cancel reason a frame may
// carry: a status message is a sentence, not a payload.
const maxStatusText = 1 << 16

// maxPooledFrame bounds the encoding buffer an endpoint keeps for its next
// frame: a larger message's buffer is left to the collector.
const maxPooledFrame = 64 << 10
