package meshmessage

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rsbd/rsbd/mesh"
)

// ErrConfig: a Config field is out of range.
var ErrConfig = errors.New("meshmessage: bad configuration")

// Config configures a Server. The zero value works: every zero field takes
// its default.
type Config struct {
	// HeartbeatTimeout closes a client silent this long; 0:
	// DefaultHeartbeatTimeout.
	HeartbeatTimeout time.Duration
	// QueueLen bounds each client's send queue, in Packages; 0:
	// DefaultQueueLen.
	QueueLen int
	// WriteTimeout bounds one write to a client; 0: DefaultWriteTimeout.
	WriteTimeout time.Duration
	// MaxClients bounds the clients served at once; 0: DefaultMaxClients.
	MaxClients int
	// RequestTimeout bounds a request whose message sets no time to live;
	// 0: DefaultRequestTimeout.
	RequestTimeout time.Duration
	// MaxRequests bounds each client's requests in flight per direction;
	// 0: DefaultMaxRequests.
	MaxRequests int
	// Tokens, when not empty, are the bearer tokens clients must present
	// in HELLO (UserAgent token, or password), each limited to scope
	// prefixes; Server.SetTokens replaces them.
	Tokens []mesh.Token
	// Logger receives the listener's logs; nil: slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the configuration with every default spelled out.
func DefaultConfig() Config { return Config{}.withDefaults() }

// Validate refuses negative bounds and timeouts.
func (c Config) Validate() error {
	switch {
	case c.HeartbeatTimeout < 0:
		return fmt.Errorf("%w: HeartbeatTimeout %v", ErrConfig, c.HeartbeatTimeout)
	case c.QueueLen < 0:
		return fmt.Errorf("%w: QueueLen %d", ErrConfig, c.QueueLen)
	case c.WriteTimeout < 0:
		return fmt.Errorf("%w: WriteTimeout %v", ErrConfig, c.WriteTimeout)
	case c.MaxClients < 0:
		return fmt.Errorf("%w: MaxClients %d", ErrConfig, c.MaxClients)
	case c.RequestTimeout < 0 || c.RequestTimeout > MaxRequestTimeout:
		return fmt.Errorf("%w: RequestTimeout %v outside 0..%v", ErrConfig, c.RequestTimeout, MaxRequestTimeout)
	case c.MaxRequests < 0:
		return fmt.Errorf("%w: MaxRequests %d", ErrConfig, c.MaxRequests)
	}
	if _, err := mesh.ParseTokens(c.Tokens); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.HeartbeatTimeout == 0 {
		c.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if c.QueueLen == 0 {
		c.QueueLen = DefaultQueueLen
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.MaxClients == 0 {
		c.MaxClients = DefaultMaxClients
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.MaxRequests == 0 {
		c.MaxRequests = DefaultMaxRequests
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
