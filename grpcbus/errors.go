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
	// ErrNoServer is the cause in the UNAVAILABLE status of a unary call no
	// server acknowledged within Config.AckTimeout, or of a stream whose
	// opening no server answered within Config.OpenTimeout.
	ErrNoServer = errors.New("grpcbus: no server acknowledged the call")
	// ErrServerSilent is the cause in the UNAVAILABLE status of a call whose
	// server endpoint answered no ping within Config.PingTimeout.
	ErrServerSilent = errors.New("grpcbus: server endpoint silent")
	// ErrStarted reports a service registered after the Server started.
	ErrStarted = errors.New("grpcbus: server already started")
)
