package bridge

import "errors"

// Errors callers branch on.
var (
	// ErrUnknownKind: no broker package registered the kind.
	ErrUnknownKind = errors.New("bridge: unknown broker kind")
	// ErrSettings: a bridge's settings are invalid.
	ErrSettings = errors.New("bridge: invalid settings")
	// ErrRejected: the broker refuses an event for good (too large, not
	// representable); retrying will not help, the event is a dead letter.
	ErrRejected = errors.New("bridge: event rejected by the broker")
	// ErrCycle: an event came in through the bridge that would send it out.
	ErrCycle = errors.New("bridge: event came in through this bridge")
	// ErrClosed: the bridge is closed.
	ErrClosed = errors.New("bridge: closed")
	// ErrDown: a route of the bridge is failing (what /readyz reports).
	ErrDown = errors.New("bridge: down")
)
