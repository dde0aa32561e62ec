package streamcall

import "time"

// Limits and timers of streamed calls.
const (
	// DefaultTimeout bounds a call whose context has no deadline.
	DefaultTimeout = time.Minute

	// DefaultGapTimeout is how long a Receiver waits for a missing chunk
	// once a later one arrived: on the bus reliable events arrive out of
	// order only when one was lost and repaired, which takes a few
	// milliseconds, so a gap this long is a lost chunk.
	DefaultGapTimeout = 2 * time.Second

	// MaxHeld bounds the chunks a Receiver holds while a gap before them
	// is open; one more is a lost chunk.
	MaxHeld = 256

	// DefaultQueueLen bounds the frames waiting for one Stream's reader: a
	// reader that falls this far behind fails its call (ErrOverflow)
	// rather than lose chunks silently.
	DefaultQueueLen = 4096

	// DefaultMaxStreams bounds the calls a Server serves at once; one more
	// gets an error chunk at once.
	DefaultMaxStreams = 1024

	// maxTimeout bounds the timeout a request may ask of a server.
	maxTimeout = 24 * time.Hour

	// sidBytes is the length of a session id in random bytes (hex-encoded).
	sidBytes = 16

	// callSuffix and replySuffix are the sub-scopes of a server's scope
	// where requests go and where a Caller's replies go by default.
	callSuffix  = "call"
	replySuffix = "reply"

	// cancelledMsg is the err attribute of a caller's cancel frame.
	cancelledMsg = "cancelled"

	// AttrTimeout is the request attribute giving the call's remaining
	// time in milliseconds.
	AttrTimeout = "timeout"
)
