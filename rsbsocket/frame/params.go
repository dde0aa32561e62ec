package frame

// Limits of the codec.
const (
	// DefaultMaxFrameSize bounds one frame body when a reader passes no
	// bound of its own. Real clients send events of several MiB, so 64 MiB
	// leaves room while keeping a hostile length from allocating gigabytes.
	DefaultMaxFrameSize = 64 << 20

	// HeaderSize is the length of a frame header: a little-endian uint32.
	HeaderSize = 4

	// handshakeSize is the length of the server's greeting, 4 zero bytes.
	// The RSB specification's example shows 5, a typo: every
	// implementation sends and expects 4.
	handshakeSize = 4

	// EagerAllocMax is the largest body allocated at once from its header;
	// a larger one is grown by growFactor as its bytes arrive, so a peer
	// that announces a big frame and stalls holds at most
	// max(EagerAllocMax, growFactor times what it sent). A power-of-two
	// payload in its Notification, the common large frame, then costs one
	// copy of a quarter of itself.
	EagerAllocMax = 1 << 20
	growFactor    = 4

	// EagerBudget bounds the bytes of bodies above EagerAllocMax, up to
	// eagerWholeMax each, that a LargeBudget lets be read at once into
	// memory allocated whole from their headers, so that such a frame
	// costs no growing copy; stalled peers hold at most this much beyond
	// what growing allows. Whole allocations beat growing up to 8 MiB and
	// lose above it (BenchmarkReadFrame), hence
	// eagerWholeMax.
	EagerBudget   = 64 << 20
	eagerWholeMax = 8 << 20

	// SharedScopeMax is the largest body whose Frame.Scope ParseOwned takes
	// from the body itself (scope.ParseShared): a small event then costs
	// one allocation, its body, and a kept scope keeps at most this much
	// alive; a larger body's scope copy costs little next to the body.
	SharedScopeMax = 512
)
