package bridge

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/rsbd/rsbd/cloudevent"
)

// Directions of a bridge, the direction label of its metrics.
const (
	// DirIn is broker → bus.
	DirIn = "in"
	// DirOut is bus → broker.
	DirOut = "out"
)

// Sender is the outbound side of a broker: bus → broker.
type Sender interface {
	// Send publishes events in order and returns nil only once the broker
	// acknowledged every one of them. On an error any of them may be lost:
	// the runner sends the whole batch again. An event the broker can never
	// take (too large for it) gives an error wrapping ErrRejected; the
	// runner then sends the batch's events one at a time and dead-letters
	// the rejected one.
	Send(ctx context.Context, events []*cloudevent.Event) error
	// Close releases the sender; it is idempotent.
	Close() error
}

// Prober is what a Sender may implement so that an idle outbound route
// notices a broker that went away: the runner calls Probe every
// ProbeEvery without events, and a failure reports the route down and
// makes the Sender again.
type Prober interface {
	// Probe checks that the broker answers.
	Probe(ctx context.Context) error
}

// Receiver is the inbound side of a broker: broker → bus.
type Receiver interface {
	// Receive reads messages until ctx ends (it returns ctx's error) or the
	// connection fails (it returns why). It calls deliver for each message
	// in the broker's order, and acknowledges or commits the message only
	// after deliver returned nil; when deliver fails, Receive returns its
	// error without acknowledging, so the broker gives the message again.
	Receive(ctx context.Context, deliver Deliver) error
	// Close releases the receiver; it is idempotent.
	Close() error
}

// Deliver hands one converted message to the runner; it returns once the
// bus accepted the event (or the dead letter was dealt with).
type Deliver func(ctx context.Context, m Message) error

// Message is what a Receiver read: an event, or a message that did not
// convert.
type Message struct {
	// Event is the converted event; nil when the message did not convert.
	Event *cloudevent.Event
	// Reason says why the message did not convert (with Event nil).
	Reason Reason
	// Err is the conversion error, for the log.
	Err error
	// Payload is the message's payload, which a dead letter carries.
	Payload []byte
	// Position is the broker's position of the message (Fallback's id),
	// which names a dead letter.
	Position string
}

// Broker is a connection to one broker, made by a Factory from a bridge's
// Settings.
type Broker interface {
	// NewSender returns a Sender to address.
	NewSender(ctx context.Context, address string) (Sender, error)
	// NewReceiver returns a Receiver of address.
	NewReceiver(ctx context.Context, address string) (Receiver, error)
	// Close releases the connection; it is idempotent.
	Close() error
}

// Factory makes a Broker of one kind from a bridge's settings. It checks
// them: an unknown option or a format its binding does not have is an
// error (wrapping ErrSettings).
type Factory func(s Settings) (Broker, error)

// Settings are what a [bridge.NAME] section says to the broker.
type Settings struct {
	// Name is the bridge's name, the bridge label of its metrics.
	Name string
	// Kind is the broker kind (kafka, nats, redis, ...).
	Kind string
	// URL says where the broker is; each kind says how it spells it.
	URL string
	// Format is the message format; FormatDefault lets the broker choose
	// its binding's default.
	Format Format
	// Options are the section's other keys (without the section prefix),
	// which the broker reads; Option and CheckOptions help.
	Options map[string]string
	// Logger logs; nil is slog.Default().
	Logger *slog.Logger
}

// Option returns the option key, or def when it is absent or empty.
func (s Settings) Option(key, def string) string {
	if v := strings.TrimSpace(s.Options[key]); v != "" {
		return v
	}
	return def
}

// CheckOptions fails, wrapping ErrSettings, when s has an option that is
// not among known.
func (s Settings) CheckOptions(known ...string) error {
	for _, k := range slices.Sorted(maps.Keys(s.Options)) {
		if !slices.Contains(known, k) {
			return fmt.Errorf("%w: %s bridge %s: unknown key %q (known: %s)", ErrSettings, s.Kind, s.Name, k, strings.Join(known, ", "))
		}
	}
	return nil
}

// CheckFormat fails, wrapping ErrSettings, when s.Format is not among
// the formats the broker's binding has; it returns the format to use,
// def for FormatDefault.
func (s Settings) CheckFormat(def Format, supported ...Format) (Format, error) {
	f := s.Format
	if f == FormatDefault {
		f = def
	}
	if !slices.Contains(supported, f) {
		return 0, fmt.Errorf("%w: %s bridge %s: format %s not supported", ErrSettings, s.Kind, s.Name, f)
	}
	return f, nil
}

// Log returns s.Logger, or slog.Default().
func (s Settings) Log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

var registry = struct {
	sync.RWMutex
	m map[string]Factory
}{m: map[string]Factory{}}

// Register makes a broker kind known; broker packages call it in init.
// Registering a kind twice panics, as registering an SQL driver twice
// does: it is a programming error.
func Register(kind string, f Factory) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[kind]; dup {
		panic("bridge: kind registered twice: " + kind)
	}
	registry.m[kind] = f
}

// Lookup returns the Factory of kind.
func Lookup(kind string) (Factory, bool) {
	registry.RLock()
	defer registry.RUnlock()
	f, ok := registry.m[kind]
	return f, ok
}

// Kinds returns the registered kinds, sorted.
func Kinds() []string {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Sorted(maps.Keys(registry.m))
}

// Open makes the Broker of s with the Factory of s.Kind.
func Open(s Settings) (Broker, error) {
	f, ok := Lookup(s.Kind)
	if !ok {
		return nil, fmt.Errorf("%w: %q (known: %s)", ErrUnknownKind, s.Kind, strings.Join(Kinds(), ", "))
	}
	return f(s)
}
