package amqp091

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/rsbd/rsbd/bridge"
)

// Option keys of a [bridge.NAME] section of kind rabbitmq.
const (
	// OptDeclare declares the queues the bridge uses (durable), "true" by
	// default; "false" uses them as they are.
	OptDeclare = "declare"
	// OptBind binds the inbound queue to "EXCHANGE/BINDING_KEY" when it
	// is declared.
	OptBind = "bind"
	// OptPrefetch is the receiver's prefetch count (DefaultPrefetch).
	OptPrefetch = "prefetch"
)

// Config is what a RabbitMQ bridge section says. Its zero value, with a
// URL, declares its queues and reads in binary mode.
type Config struct {
	// URL is the broker: amqp://user:password@host:port/vhost.
	URL string
	// NoDeclare uses the queues as they are instead of declaring them.
	NoDeclare bool
	// Bind, "EXCHANGE/BINDING_KEY", binds the inbound queue on declare.
	Bind string
	// Prefetch is the receiver's prefetch count; 0 is DefaultPrefetch.
	Prefetch int
	// Format is the message format; bridge.FormatDefault is binary.
	Format bridge.Format
}

// DefaultConfig returns the defaults: binary, queues declared,
// DefaultPrefetch.
func DefaultConfig() Config {
	return Config{Prefetch: DefaultPrefetch, Format: bridge.FormatBinary}
}

// Validate checks c and fills its defaults; the error wraps
// bridge.ErrSettings.
func (c *Config) Validate() error {
	if c.Prefetch == 0 {
		c.Prefetch = DefaultPrefetch
	}
	u, err := url.Parse(c.URL)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "amqp" && u.Scheme != "amqps"):
		return fmt.Errorf("%w: rabbitmq url %q (amqp://user:password@host:port/vhost)", bridge.ErrSettings, c.URL)
	case c.Prefetch < 0 || c.Prefetch > 65535:
		return fmt.Errorf("%w: rabbitmq prefetch %d (1 to 65535)", bridge.ErrSettings, c.Prefetch)
	case c.Bind != "" && !strings.Contains(c.Bind, "/"):
		return fmt.Errorf("%w: rabbitmq bind %q (EXCHANGE/BINDING_KEY)", bridge.ErrSettings, c.Bind)
	}
	s := bridge.Settings{Kind: Kind, Format: c.Format}
	c.Format, err = s.CheckFormat(bridge.FormatBinary, bridge.FormatBinary, bridge.FormatStructured, bridge.FormatRaw, bridge.FormatFrame)
	return err
}

// configOf reads a bridge section's settings.
func configOf(s bridge.Settings) (Config, error) {
	if err := s.CheckOptions(OptDeclare, OptBind, OptPrefetch); err != nil {
		return Config{}, err
	}
	c := Config{URL: s.URL, Bind: s.Option(OptBind, ""), Format: s.Format}
	declare, err := strconv.ParseBool(s.Option(OptDeclare, "true"))
	if err != nil {
		return Config{}, fmt.Errorf("%w: rabbitmq bridge %s: declare %q", bridge.ErrSettings, s.Name, s.Options[OptDeclare])
	}
	c.NoDeclare = !declare
	if p := s.Option(OptPrefetch, ""); p != "" {
		if c.Prefetch, err = strconv.Atoi(p); err != nil {
			return Config{}, fmt.Errorf("%w: rabbitmq bridge %s: prefetch %q", bridge.ErrSettings, s.Name, p)
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("rabbitmq bridge %s: %w", s.Name, err)
	}
	return c, nil
}

// ParseAddress splits an outbound address: "EXCHANGE/ROUTING_KEY"
// publishes to an exchange (the routing key may hold more slashes); an
// address without a slash is a queue, published to through the default
// exchange.
func ParseAddress(address string) (exchange, key string, queue bool) {
	if ex, k, ok := strings.Cut(address, "/"); ok {
		return ex, k, false
	}
	return "", address, true
}
