package meshmessage

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
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
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
