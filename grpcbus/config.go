package grpcbus

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/rsbd/rsbd/scope"
)

// Config configures a ClientConn or a Server. The zero value works: zero
// fields take the defaults of params.go.
type Config struct {
	// Prefix is the scope of services and endpoints (default DefaultPrefix);
	// clients and servers must agree on it.
	Prefix string
	// WireFormat is the wire format of a ClientConn's calls, WireProto or
	// WireJSON (default DefaultWireFormat); grpc.CallContentSubtype
	// overrides it per call.
	WireFormat string
	// WireFormats are the wire formats a Server accepts (default both);
	// others are answered UNIMPLEMENTED.
	WireFormats []string
	// InitialWindow is the number of Message frames this side grants its
	// peer per stream at its opening (default DefaultInitialWindow).
	InitialWindow int
	// MaxWindow caps the number of Message frames a stream's receiver
	// grants at a time as its window grows while its reader keeps up
	// (default DefaultMaxWindow, and at least InitialWindow).
	MaxWindow int
	// WindowBytes bounds the bytes of messages a stream's receiver grants
	// at a time, at the size of the messages it received lately (default
	// DefaultWindowBytes); large messages shrink the window below
	// InitialWindow, down to one message.
	WindowBytes int
	// MaxBufferedWrites bounds the messages a stream holds once its window
	// is spent; SendMsg blocks past it (default InitialWindow).
	MaxBufferedWrites int
	// MaxStreams bounds the open streams of the endpoint (default
	// DefaultMaxStreams).
	MaxStreams int
	// MaxCalls bounds the unary calls a Server runs at once (default
	// DefaultMaxCalls).
	MaxCalls int
	// PingInterval is how often a ClientConn pings server endpoints it has
	// streams with (default DefaultPingInterval).
	PingInterval time.Duration
	// PingTimeout is how long a client stream may hear nothing from its
	// server before it fails with UNAVAILABLE; the client asks its servers
	// to hold it to the same (default DefaultPingTimeout).
	PingTimeout time.Duration
	// MaxPingTimeout caps the ping timeout a Server grants a client
	// (default DefaultMaxPingTimeout).
	MaxPingTimeout time.Duration
	// AckTimeout is how long a unary call waits for a server to acknowledge
	// its request before it fails with UNAVAILABLE (default
	// DefaultAckTimeout). Once acknowledged, the call pings the server's
	// endpoint as streams do and fails with UNAVAILABLE when it hears
	// nothing for PingTimeout. A negative value asks for no
	// acknowledgement, for servers that do not send one; such a call waits
	// for its deadline.
	AckTimeout time.Duration
	// OpenTimeout is how long a stream's opening waits for a server's
	// handshake reply before it fails with UNAVAILABLE (default
	// DefaultOpenTimeout): servers reply at once, before the handler runs,
	// so only a service nobody serves (or an unreachable one) goes
	// unanswered. A negative value waits for the call's deadline.
	OpenTimeout time.Duration
	// CallTimeout bounds calls whose context has no deadline (default
	// DefaultCallTimeout).
	CallTimeout time.Duration
	// Registerer, when set, receives the rsbd_grpc_* metrics.
	Registerer prometheus.Registerer
	// Logger receives the package's logs (default slog.Default()).
	Logger *slog.Logger
}

// DefaultConfig returns the configuration the zero value stands for.
func DefaultConfig() Config {
	return Config{
		Prefix: DefaultPrefix, WireFormat: DefaultWireFormat, WireFormats: []string{WireProto, WireJSON},
		InitialWindow: DefaultInitialWindow, MaxWindow: DefaultMaxWindow, WindowBytes: DefaultWindowBytes,
		MaxBufferedWrites: DefaultInitialWindow, MaxStreams: DefaultMaxStreams, MaxCalls: DefaultMaxCalls,
		PingInterval: DefaultPingInterval, PingTimeout: DefaultPingTimeout,
		MaxPingTimeout: DefaultMaxPingTimeout, AckTimeout: DefaultAckTimeout,
		OpenTimeout: DefaultOpenTimeout, CallTimeout: DefaultCallTimeout,
		Logger: slog.Default(),
	}
}

// Validate reports the first invalid field of c with its defaults applied.
func (c Config) Validate() error {
	d := c.withDefaults()
	if _, err := scope.Parse(d.Prefix); err != nil {
		return fmt.Errorf("%w: Prefix: %w", ErrConfig, err)
	}
	for _, f := range append([]string{d.WireFormat}, d.WireFormats...) {
		if !knownFormat(f) {
			return fmt.Errorf("%w: %w %q", ErrConfig, ErrWireFormat, f)
		}
	}
	if c.InitialWindow < 0 || c.MaxWindow < 0 || c.WindowBytes < 0 || c.MaxBufferedWrites < 0 || c.MaxStreams < 0 || c.MaxCalls < 0 {
		return fmt.Errorf("%w: negative limit", ErrConfig)
	}
	if d.MaxWindow > maxWindow {
		return fmt.Errorf("%w: MaxWindow %d exceeds %d", ErrConfig, d.MaxWindow, maxWindow)
	}
	if c.PingInterval < 0 || c.PingTimeout < 0 || c.MaxPingTimeout < 0 || c.CallTimeout < 0 {
		return fmt.Errorf("%w: negative duration", ErrConfig)
	}
	if d.PingTimeout <= d.PingInterval {
		return fmt.Errorf("%w: PingTimeout %v must exceed PingInterval %v", ErrConfig, d.PingTimeout, d.PingInterval)
	}
	return nil
}

// withDefaults returns c with its zero fields set.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	setDefault(&c.Prefix, d.Prefix)
	setDefault(&c.WireFormat, d.WireFormat)
	if len(c.WireFormats) == 0 {
		c.WireFormats = d.WireFormats
	}
	setDefault(&c.InitialWindow, d.InitialWindow)
	setDefault(&c.MaxWindow, max(d.MaxWindow, c.InitialWindow))
	c.MaxWindow = max(c.MaxWindow, c.InitialWindow)
	setDefault(&c.WindowBytes, d.WindowBytes)
	setDefault(&c.MaxBufferedWrites, c.InitialWindow)
	setDefault(&c.MaxStreams, d.MaxStreams)
	setDefault(&c.MaxCalls, d.MaxCalls)
	setDefault(&c.PingInterval, d.PingInterval)
	setDefault(&c.PingTimeout, d.PingTimeout)
	setDefault(&c.MaxPingTimeout, d.MaxPingTimeout)
	setDefault(&c.AckTimeout, d.AckTimeout)
	setDefault(&c.OpenTimeout, d.OpenTimeout)
	setDefault(&c.CallTimeout, d.CallTimeout)
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	return c
}

func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// supports reports whether the server accepts wire format f.
func (c *Config) supports(f string) bool { return slices.Contains(c.WireFormats, f) }

// Option adjusts a ClientConn or a Server.
type Option func(*options)

type options struct {
	cfg         Config
	unaryClient []grpc.UnaryClientInterceptor
	streamCl    []grpc.StreamClientInterceptor
	unarySrv    []grpc.UnaryServerInterceptor
	streamSrv   []grpc.StreamServerInterceptor
}

// WithConfig sets the configuration.
func WithConfig(c Config) Option { return func(o *options) { o.cfg = c } }

// WithUnaryClientInterceptor adds interceptors to a ClientConn's unary
// calls; the first added is the outermost.
func WithUnaryClientInterceptor(i ...grpc.UnaryClientInterceptor) Option {
	return func(o *options) { o.unaryClient = append(o.unaryClient, i...) }
}

// WithStreamClientInterceptor adds interceptors to a ClientConn's streams;
// the first added is the outermost.
func WithStreamClientInterceptor(i ...grpc.StreamClientInterceptor) Option {
	return func(o *options) { o.streamCl = append(o.streamCl, i...) }
}

// WithUnaryServerInterceptor adds interceptors to a Server's unary
// handlers; the first added is the outermost.
func WithUnaryServerInterceptor(i ...grpc.UnaryServerInterceptor) Option {
	return func(o *options) { o.unarySrv = append(o.unarySrv, i...) }
}

// WithStreamServerInterceptor adds interceptors to a Server's stream
// handlers; the first added is the outermost.
func WithStreamServerInterceptor(i ...grpc.StreamServerInterceptor) Option {
	return func(o *options) { o.streamSrv = append(o.streamSrv, i...) }
}

// collectOptions applies opts and validates the configuration.
func collectOptions(opts []Option) (options, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	if err := o.cfg.Validate(); err != nil {
		return o, err
	}
	o.cfg = o.cfg.withDefaults()
	return o, nil
}
