package rsbsocket

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"time"

	"github.com/rsbd/rsbd/rsbsocket/frame"
)

// SlowClientPolicy says what happens when a connection's send queue is full
// or the connection is stalled (see Server).
type SlowClientPolicy int

const (
	// SlowClientDropNewest drops the frame that did not fit and counts it
	// (DropQueueFull); the connection stays. This is the default: a
	// stalled subscriber delays the others at most once by StallTimeout,
	// and it loses only what it could not take.
	SlowClientDropNewest SlowClientPolicy = iota
	// SlowClientDisconnect drops the frame and closes the connection
	// (DisconnectSlowClient), so the client notices instead of silently
	// missing events.
	SlowClientDisconnect
)

// String names the policy.
func (p SlowClientPolicy) String() string {
	switch p {
	case SlowClientDropNewest:
		return "drop-newest"
	case SlowClientDisconnect:
		return "disconnect"
	}
	return fmt.Sprintf("SlowClientPolicy(%d)", int(p))
}

// DefaultInterest is the interest of a connection that has announced no
// listening participant through introspection.
type DefaultInterest int

const (
	// InterestAll gives such a connection every event, as the RSB socket
	// server does for every client (RSB clients send no subscriptions, and
	// a process with introspection disabled announces nothing).
	InterestAll DefaultInterest = iota
	// InterestNone gives it nothing, or only IntrospectionScope when it
	// announced informers (it runs introspection and answers surveys).
	InterestNone
)

// ErrInvalidConfig is wrapped by every error Validate returns.
var ErrInvalidConfig = errors.New("rsbsocket: invalid config")

// Config configures a Server. The zero value works: zero fields take the
// defaults of params.go. Do not modify a Config after passing it to
// NewServer.
type Config struct {
	// Addr is the listen address of ListenAndServe (default ":55555").
	Addr string
	// MaxFrameSize bounds an inbound frame body (default 64 MiB). A larger
	// frame is counted and closes its connection.
	MaxFrameSize int
	// QueueFrames and QueueBytes bound each connection's send queue
	// (defaults 1 048 576 frames, 64 MiB). QueueBytes charges each frame
	// FrameOverhead besides its body bytes, so it bounds memory.
	QueueFrames int
	QueueBytes  int
	// StallTimeout bounds how long forwarding a frame a client published
	// waits for room in another connection's queue before that connection
	// counts as stalled (default 100 ms). See Server.
	StallTimeout time.Duration
	// SlowClientPolicy says what a full send queue, or a stalled
	// connection, does (default SlowClientDropNewest).
	SlowClientPolicy SlowClientPolicy
	// DefaultInterest is the interest of a connection that announced no
	// listening participant (default InterestAll).
	DefaultInterest DefaultInterest
	// MaxConnections bounds the connections served at once (default
	// 16384); a connection past it is closed at once and counted in
	// Stats.ConnsRefused.
	MaxConnections int
	// Allow, when not empty, lists the networks TCP clients may connect
	// from: a connection from any other address is closed as soon as it
	// is accepted and counted in Stats.ConnsNotAllowed. Empty (the
	// default) serves every address that reaches the listener, as RSB's
	// socket servers do, which have no authentication. Connections on a
	// Unix socket are not filtered (the socket file's mode guards them).
	Allow []netip.Prefix
	// MaxParticipants bounds the introspection participants tracked per
	// connection (default 4096).
	MaxParticipants int
	// WriteTimeout bounds one write to a client (default 10 s).
	WriteTimeout time.Duration
	// HandshakeTimeout bounds the write of the 4-byte greeting (default 5 s).
	HandshakeTimeout time.Duration
	// ShutdownTimeout bounds the orderly shutdown of ListenAndServe when its
	// context ends (default 5 s).
	ShutdownTimeout time.Duration
	// Logger receives connection events and errors (default slog.Default()).
	Logger *slog.Logger
	// FrameRoom reserves bytes before and after every frame body of at
	// most 1 MiB the server reads from a client, so that the Handler can
	// wrap the body in place (frame.Frame.Wrap) instead of copying it. Zero
	// (the default) reserves none; each side is at most MaxFrameRoom.
	FrameRoom frame.Room
	// SpinWait is how long a reader that relayed a frame to one
	// connection, which has been answering such relays at once, polls for
	// the answer before it parks (default DefaultSpinWait; negative: never
	// poll). See Server.
	SpinWait time.Duration
}

// MaxFrameRoom bounds each side of Config.FrameRoom.
const MaxFrameRoom = 64

// DefaultConfig returns a Config with every default filled in.
func DefaultConfig() Config {
	return Config{
		Addr:             DefaultAddr,
		MaxFrameSize:     frame.DefaultMaxFrameSize,
		QueueFrames:      DefaultQueueFrames,
		QueueBytes:       DefaultQueueBytes,
		StallTimeout:     DefaultStallTimeout,
		SlowClientPolicy: SlowClientDropNewest,
		DefaultInterest:  InterestAll,
		MaxConnections:   DefaultMaxConnections,
		MaxParticipants:  DefaultMaxParticipants,
		WriteTimeout:     DefaultWriteTimeout,
		HandshakeTimeout: DefaultHandshakeTimeout,
		ShutdownTimeout:  DefaultShutdownTimeout,
		Logger:           slog.Default(),
		SpinWait:         DefaultSpinWait,
	}
}

// withDefaults returns c with its zero fields set to the defaults.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	setDefault(&c.Addr, d.Addr)
	setDefault(&c.MaxFrameSize, d.MaxFrameSize)
	setDefault(&c.QueueFrames, d.QueueFrames)
	setDefault(&c.QueueBytes, d.QueueBytes)
	setDefault(&c.StallTimeout, d.StallTimeout)
	setDefault(&c.MaxConnections, d.MaxConnections)
	setDefault(&c.MaxParticipants, d.MaxParticipants)
	setDefault(&c.WriteTimeout, d.WriteTimeout)
	setDefault(&c.HandshakeTimeout, d.HandshakeTimeout)
	setDefault(&c.ShutdownTimeout, d.ShutdownTimeout)
	setDefault(&c.SpinWait, d.SpinWait)
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	return c
}

// setDefault sets *v to d when *v is the zero value.
func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// Validate reports the first invalid field; zero fields are valid (they take
// defaults).
func (c Config) Validate() error {
	switch {
	case c.MaxFrameSize < 0 || int64(c.MaxFrameSize) > 1<<32-1:
		return fmt.Errorf("%w: MaxFrameSize %d outside 0..4294967295", ErrInvalidConfig, c.MaxFrameSize)
	case c.QueueFrames < 0:
		return fmt.Errorf("%w: QueueFrames %d < 0", ErrInvalidConfig, c.QueueFrames)
	case c.QueueBytes < 0:
		return fmt.Errorf("%w: QueueBytes %d < 0", ErrInvalidConfig, c.QueueBytes)
	case c.SlowClientPolicy != SlowClientDropNewest && c.SlowClientPolicy != SlowClientDisconnect:
		return fmt.Errorf("%w: unknown %v", ErrInvalidConfig, c.SlowClientPolicy)
	case c.DefaultInterest != InterestAll && c.DefaultInterest != InterestNone:
		return fmt.Errorf("%w: unknown DefaultInterest %d", ErrInvalidConfig, int(c.DefaultInterest))
	case c.MaxConnections < 0:
		return fmt.Errorf("%w: MaxConnections %d < 0", ErrInvalidConfig, c.MaxConnections)
	case c.MaxParticipants < 0:
		return fmt.Errorf("%w: MaxParticipants %d < 0", ErrInvalidConfig, c.MaxParticipants)
	case c.WriteTimeout < 0 || c.HandshakeTimeout < 0 || c.ShutdownTimeout < 0 || c.StallTimeout < 0:
		return fmt.Errorf("%w: negative timeout", ErrInvalidConfig)
	case c.SpinWait > MaxSpinWait:
		return fmt.Errorf("%w: SpinWait %v above %v", ErrInvalidConfig, c.SpinWait, MaxSpinWait)
	case slices.ContainsFunc(c.Allow, func(p netip.Prefix) bool { return !p.IsValid() }):
		return fmt.Errorf("%w: invalid prefix in Allow", ErrInvalidConfig)
	case c.FrameRoom.Head < 0 || c.FrameRoom.Head > MaxFrameRoom || c.FrameRoom.Tail < 0 || c.FrameRoom.Tail > MaxFrameRoom:
		return fmt.Errorf("%w: FrameRoom %+v outside 0..%d", ErrInvalidConfig, c.FrameRoom, MaxFrameRoom)
	}
	return nil
}
