package sockclient

import (
	"errors"
	"fmt"
	"time"

	"github.com/rsbd/rsbd/rsbsocket/frame"
)

// Errors callers branch on.
var (
	// ErrClosed is returned by ClientConn methods after Close.
	ErrClosed = errors.New("rsbsocket: connection closed")

	// ErrInvalidConfig is wrapped by every error ClientConfig.Validate
	// returns.
	ErrInvalidConfig = errors.New("rsbsocket: invalid config")
)

// ClientConfig configures a ClientConn. The zero value works: zero fields
// take the defaults of params.go.
type ClientConfig struct {
	// MaxFrameSize bounds a received frame body (default 64 MiB).
	MaxFrameSize int
	// HandshakeTimeout bounds the wait for the server's greeting when the
	// Dial context has no earlier deadline (default 5 s).
	HandshakeTimeout time.Duration
	// CloseTimeout bounds Close's wait for the server's EOF (default 5 s).
	CloseTimeout time.Duration
}

// withDefaults returns c with its zero fields set to the defaults.
func (c ClientConfig) withDefaults() ClientConfig {
	if c.MaxFrameSize == 0 {
		c.MaxFrameSize = frame.DefaultMaxFrameSize
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = defaultHandshakeTimeout
	}
	if c.CloseTimeout == 0 {
		c.CloseTimeout = defaultCloseTimeout
	}
	return c
}

// Validate reports the first invalid field.
func (c ClientConfig) Validate() error {
	switch {
	case c.MaxFrameSize < 0 || int64(c.MaxFrameSize) > 1<<32-1:
		return fmt.Errorf("%w: MaxFrameSize %d outside 0..4294967295", ErrInvalidConfig, c.MaxFrameSize)
	case c.HandshakeTimeout < 0 || c.CloseTimeout < 0:
		return fmt.Errorf("%w: negative timeout", ErrInvalidConfig)
	}
	return nil
}
