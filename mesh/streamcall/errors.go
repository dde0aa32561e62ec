package streamcall

import "errors"

// Errors callers branch on. Errors returned by the package wrap them with
// %w.
var (
	// ErrLost: a chunk did not arrive while later ones did (the gap stayed
	// open for GapTimeout, or more than MaxHeld chunks waited behind it).
	ErrLost = errors.New("streamcall: chunk lost")
	// ErrOutOfOrder: a chunk arrived for a place in the stream already
	// passed (a duplicate, or one too late).
	ErrOutOfOrder = errors.New("streamcall: chunk out of order")
	// ErrNoAnswer: no chunk arrived within the first chunk's timeout: no
	// server took the call.
	ErrNoAnswer = errors.New("streamcall: no answer")
	// ErrDeadline: the call's deadline passed before its last chunk.
	ErrDeadline = errors.New("streamcall: deadline passed")
	// ErrOverflow: the Stream's reader fell DefaultQueueLen frames behind.
	ErrOverflow = errors.New("streamcall: stream queue overflow")
	// ErrRemote: the server ended the stream with an error (the err
	// attribute of its last chunk); the error is a *RemoteError.
	ErrRemote = errors.New("streamcall: remote error")
	// ErrBadFrame: a frame is not a well-formed STREAM_REQ or STREAM_CHUNK.
	ErrBadFrame = errors.New("streamcall: malformed frame")
	// ErrClosed: the Caller or Server was closed.
	ErrClosed = errors.New("streamcall: closed")
	// ErrTooManyStreams: the server serves DefaultMaxStreams calls already.
	ErrTooManyStreams = errors.New("streamcall: too many streams")
	// ErrCancelled: the caller cancelled the call (what a server's handler
	// sees as its context's cause).
	ErrCancelled = errors.New("streamcall: cancelled by the caller")
)

// RemoteError is the error a server ended a stream with.
type RemoteError struct {
	// Message is the err attribute of the last chunk.
	Message string
}

// Error returns the message.
func (e *RemoteError) Error() string { return "streamcall: remote error: " + e.Message }

// Is reports whether target is ErrRemote.
func (e *RemoteError) Is(target error) bool { return target == ErrRemote }
