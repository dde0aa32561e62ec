package grpcbus

import "errors"

// Errors callers can test for with errors.Is. Calls and streams return
// status errors (package status) instead; these describe setup and frames.
var (
	// ErrConfig reports an invalid Config or option.
	ErrConfig = errors.New("grpcbus: invalid configuration")
	// ErrClosed reports use of a closed ClientConn or Server.
	ErrClosed = errors.New("grpcbus: closed")
	// ErrBadFrame reports a frame that does not decode or is inconsistent.
	ErrBadFrame = errors.New("grpcbus: malformed frame")
	// ErrWireFormat reports a wire format the package does not know.
	ErrWireFormat = errors.New("grpcbus: unsupported wire format")
	// ErrStarted reports a service registered after the Server started.
	ErrStarted = errors.New("grpcbus: server already started")
)
