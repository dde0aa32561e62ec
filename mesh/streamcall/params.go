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

	// DefaultFirstChunkTimeout bounds the wait for a call's first chunk:
	// a server answers at once, if only with an empty chunk, or no server
	// took the call.
	DefaultFirstChunkTimeout = 30 * time.Second

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

// Limits and timers of the HTTP handler.
const (
	// HTTPPrefix is the path streamed calls are served under for HTTP
	// clients; the rest of the path is the server's scope. '.' is not a
	// scope character, so no scope of the CloudEvents gateway beside it is
	// shadowed.
	HTTPPrefix = "/.stream"

	// MaxPromptBytes bounds a prompt an HTTP client sends.
	MaxPromptBytes = 1 << 20

	// DefaultHTTPTimeout bounds a call an HTTP client opens.
	DefaultHTTPTimeout = 10 * time.Minute

	// DefaultHTTPWriteTimeout bounds one write to an HTTP client.
	DefaultHTTPWriteTimeout = 10 * time.Second

	// maxHTTPScopes bounds the scopes the HTTP handler keeps a Caller
	// for (clients choose the scope in the path); a call to another scope
	// gets a Caller of its own.
	maxHTTPScopes = 256
)
