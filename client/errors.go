package client

import (
	"context"
	"errors"
	"fmt"
)

// Errors callers branch on. Errors returned by the package wrap them with %w.
var (
	// ErrClosed: the participant or its Bus was closed.
	ErrClosed = errors.New("client: closed")
	// ErrDisconnected: the connection to the bus was lost; the Bus cannot
	// be used any more.
	ErrDisconnected = errors.New("client: disconnected from the bus")
	// ErrTimeout: a Read or Call reached its deadline.
	ErrTimeout = errors.New("client: timeout")
	// ErrScope: an informer was asked to publish outside its scope.
	ErrScope = errors.New("client: scope outside the participant's scope")
	// ErrConfig: an invalid Config, option or argument.
	ErrConfig = errors.New("client: invalid configuration")
	// ErrBadURI: a bus URI that cannot be parsed or is not supported.
	ErrBadURI = errors.New("client: bad URI")
	// ErrTooManyCalls: a RemoteServer already waits for maxPendingCalls
	// replies.
	ErrTooManyCalls = errors.New("client: too many pending calls")
	// ErrRemote: a remote method failed; the error is a *RemoteError.
	ErrRemote = errors.New("client: remote error")
)

// RemoteError is the error of a call whose LocalServer replied with an error
// reply. errors.Is(err, ErrRemote) holds for it.
type RemoteError struct {
	// Scope is the method scope of the call.
	Scope string
	// Method is the method name.
	Method string
	// Message is the error text the server sent.
	Message string
}

// Error returns the remote message with the method that failed.
func (e *RemoteError) Error() string {
	return fmt.Sprintf("client: remote method %s failed: %s", e.Scope, e.Message)
}

// Is reports whether target is ErrRemote.
func (e *RemoteError) Is(target error) bool { return target == ErrRemote }

// ctxError wraps the error of a finished context: a deadline becomes
// ErrTimeout (still matching context.DeadlineExceeded), a cancellation stays
// context.Canceled.
func ctxError(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return fmt.Errorf("client: %w", err)
}
