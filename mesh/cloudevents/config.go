package cloudevents

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// ErrConfig is wrapped by the errors of Config.Validate.
var ErrConfig = errors.New("cloudevents: invalid configuration")

// Config configures a Gateway. The zero value works: every zero field
// takes its default.
type Config struct {
	// MaxBodyBytes bounds a POST body (DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// QueueLen bounds the events waiting for one subscriber
	// (DefaultQueueLen).
	QueueLen int
	// QueueBytes bounds the JSON bytes waiting for one subscriber
	// (DefaultQueueBytes); an event heavier than the bound alone still
	// passes an empty queue.
	QueueBytes int64
	// MaxSubscribers bounds the subscriptions served at once
	// (DefaultMaxSubscribers).
	MaxSubscribers int
	// WriteTimeout bounds one write to a subscriber (DefaultWriteTimeout).
	WriteTimeout time.Duration
	// OriginPatterns are the host patterns (path.Match syntax) of the
	// origins other than the request's own host whose pages may open a
	// WebSocket; none by default, as browsers' cross-site requests are
	// refused.
	OriginPatterns []string
	// Tokens, when not empty, are the bearer tokens every request needs,
	// each limited to scope prefixes (see Token); Gateway.SetTokens
	// replaces them. Webhooks added in Go are not affected.
	Tokens []Token
	// Logger receives the gateway's log; nil logs nothing.
	Logger *slog.Logger
}

// DefaultConfig returns the configuration with every default filled in.
func DefaultConfig() Config {
	return Config{
		MaxBodyBytes: DefaultMaxBodyBytes, QueueLen: DefaultQueueLen, QueueBytes: DefaultQueueBytes,
		MaxSubscribers: DefaultMaxSubscribers, WriteTimeout: DefaultWriteTimeout,
	}
}

// Validate checks c; zero fields are valid (their defaults apply).
func (c Config) Validate() error {
	switch {
	case c.MaxBodyBytes < 0 || c.MaxBodyBytes > DefaultMaxBodyBytes:
		return fmt.Errorf("%w: MaxBodyBytes %d outside 0..%d", ErrConfig, c.MaxBodyBytes, DefaultMaxBodyBytes)
	case c.QueueLen < 0:
		return fmt.Errorf("%w: QueueLen %d < 0", ErrConfig, c.QueueLen)
	case c.QueueBytes < 0:
		return fmt.Errorf("%w: QueueBytes %d < 0", ErrConfig, c.QueueBytes)
	case c.MaxSubscribers < 0:
		return fmt.Errorf("%w: MaxSubscribers %d < 0", ErrConfig, c.MaxSubscribers)
	case c.WriteTimeout < 0:
		return fmt.Errorf("%w: WriteTimeout %v < 0", ErrConfig, c.WriteTimeout)
	}
	_, err := parseTokens(c.Tokens)
	return err
}

// withDefaults returns c with its zero fields set to their defaults.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = d.MaxBodyBytes
	}
	if c.QueueLen == 0 {
		c.QueueLen = d.QueueLen
	}
	if c.QueueBytes == 0 {
		c.QueueBytes = d.QueueBytes
	}
	if c.MaxSubscribers == 0 {
		c.MaxSubscribers = d.MaxSubscribers
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = d.WriteTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
