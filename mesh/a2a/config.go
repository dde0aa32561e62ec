package a2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/scope"
)

// ErrConfig is wrapped by the errors of Config.Validate.
var ErrConfig = errors.New("a2a: invalid configuration")

// Config configures a Handler. The zero value works: every zero field
// takes its default, and requests must then name their agent in the path.
type Config struct {
	// DefaultAgent is the scope of the agent a request to Prefix itself
	// goes to; empty: none, such a request gets 404.
	DefaultAgent string
	// CallTimeout bounds the wait for an agent's answer
	// (DefaultCallTimeout).
	CallTimeout time.Duration
	// StreamTimeout bounds a streamed answer (DefaultStreamTimeout).
	StreamTimeout time.Duration
	// WriteTimeout bounds one write to a client (DefaultWriteTimeout).
	WriteTimeout time.Duration
	// Name and Description go into the agent card the Handler builds.
	Name, Description string
	// Card, when set, is the agent card served instead, as it is.
	Card json.RawMessage
	// Tokens returns the bearer tokens in force (nil or empty: none); a
	// request then needs one that may publish on the agent's scope.
	Tokens func() *mesh.Tokens
	// Logger receives the handler's log; nil logs nothing.
	Logger *slog.Logger
}

// DefaultConfig returns the configuration with every default filled in.
func DefaultConfig() Config {
	return Config{CallTimeout: DefaultCallTimeout, StreamTimeout: DefaultStreamTimeout,
		WriteTimeout: DefaultWriteTimeout, Name: "rsbd"}
}

// Validate checks c; zero fields are valid.
func (c Config) Validate() error {
	if c.DefaultAgent != "" {
		if _, err := scope.Parse(c.DefaultAgent); err != nil {
			return fmt.Errorf("%w: DefaultAgent: %w", ErrConfig, err)
		}
	}
	if c.CallTimeout < 0 || c.StreamTimeout < 0 || c.WriteTimeout < 0 {
		return fmt.Errorf("%w: negative timeout", ErrConfig)
	}
	if c.Card != nil && !json.Valid(c.Card) {
		return fmt.Errorf("%w: Card is not JSON", ErrConfig)
	}
	return nil
}

// withDefaults returns c with its zero fields set to their defaults.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.CallTimeout == 0 {
		c.CallTimeout = d.CallTimeout
	}
	if c.StreamTimeout == 0 {
		c.StreamTimeout = d.StreamTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = d.WriteTimeout
	}
	if c.Name == "" {
		c.Name = d.Name
	}
	if c.Tokens == nil {
		c.Tokens = func() *mesh.Tokens { return nil }
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
