package bridge

import (
	"fmt"
	"strings"
	"time"

	"github.com/rsbd/rsbd/scope"
)

// Route joins a scope of the bus and an address of the broker in one
// direction. A zero Route is no route.
type Route struct {
	// Scope: outbound, the events on it and its sub-scopes leave; inbound,
	// where the events arrive.
	Scope string
	// Address is the broker's topic, subject, stream, queue, ... in the
	// broker's own spelling.
	Address string
}

// DeadLetterBrokerPrefix marks a DeadLetter that is an address of the
// broker whatever its spelling, such as an AMQP 1.0 address "/queue/NAME"
// that would otherwise read as a scope.
const DeadLetterBrokerPrefix = "broker:"

// IsZero reports whether r is no route.
func (r Route) IsZero() bool { return r.Scope == "" && r.Address == "" }

// Config configures a Bridge: the broker's Settings, a route per
// direction and the dead-letter destination. Zero fields take the
// defaults of params.go.
type Config struct {
	Settings
	// In is the route broker → bus; zero: none.
	In Route
	// Out is the route bus → broker; zero: none.
	Out Route
	// DeadLetter is where messages that do not convert go: a scope
	// (starting with "/"), "broker:ADDRESS" (DeadLetterBrokerPrefix: any
	// address of the broker, one starting with "/" too), or an address of
	// the broker that does not start with "/"; "" drops them (counted and
	// logged).
	DeadLetter string
	// QueueLen bounds the outbound queue in events (DefaultQueueLen).
	QueueLen int
	// QueueBytes bounds the outbound queue in bytes (DefaultQueueBytes).
	QueueBytes int64
	// BatchSize bounds the events of one Send (DefaultBatchSize).
	BatchSize int
	// Backoff is the first wait after a failure (DefaultBackoff).
	Backoff time.Duration
	// MaxBackoff caps the wait between attempts (DefaultMaxBackoff).
	MaxBackoff time.Duration
}

// DefaultConfig returns a Config with every limit at its default; Name,
// Kind and the routes are the caller's.
func DefaultConfig() Config {
	return Config{QueueLen: DefaultQueueLen, QueueBytes: DefaultQueueBytes, BatchSize: DefaultBatchSize,
		Backoff: DefaultBackoff, MaxBackoff: DefaultMaxBackoff}
}

// withDefaults returns c with zero limits set to their defaults.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.QueueLen <= 0 {
		c.QueueLen = d.QueueLen
	}
	if c.QueueBytes <= 0 {
		c.QueueBytes = d.QueueBytes
	}
	if c.BatchSize <= 0 {
		c.BatchSize = d.BatchSize
	}
	if c.Backoff <= 0 {
		c.Backoff = d.Backoff
	}
	if c.MaxBackoff < c.Backoff {
		c.MaxBackoff = max(d.MaxBackoff, c.Backoff)
	}
	return c
}

// Validate checks c: a name and a kind, at least one route, each with a
// scope and an address, a dead-letter scope that parses.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: bridge %s: %s", ErrSettings, c.Name, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Name == "":
		return fmt.Errorf("%w: bridge without a name", ErrSettings)
	case c.Kind == "":
		return bad("no kind")
	case c.In.IsZero() && c.Out.IsZero():
		return bad("neither an in nor an out route")
	}
	for _, r := range [...]struct {
		dir string
		r   Route
	}{{DirIn, c.In}, {DirOut, c.Out}} {
		if r.r.IsZero() {
			continue
		}
		if r.r.Address == "" {
			return bad("the %s route has no address", r.dir)
		}
		if _, err := scope.Parse(r.r.Scope); err != nil {
			return bad("the %s route's scope: %v", r.dir, err)
		}
	}
	sc, addr := c.deadLetterTarget()
	if sc != "" {
		if _, err := scope.Parse(sc); err != nil {
			return bad("the dead-letter scope: %v", err)
		}
	}
	if c.DeadLetter != "" && sc == "" && addr == "" {
		return bad("the dead-letter %q names no broker address", c.DeadLetter)
	}
	return nil
}

// deadLetterTarget splits DeadLetter into the dead-letter scope of the bus
// or the dead-letter address of the broker; at most one is not empty.
func (c Config) deadLetterTarget() (sc, address string) {
	switch d := c.DeadLetter; {
	case strings.HasPrefix(d, DeadLetterBrokerPrefix):
		return "", strings.TrimPrefix(d, DeadLetterBrokerPrefix)
	case strings.HasPrefix(d, "/"):
		return d, ""
	default:
		return "", d
	}
}
