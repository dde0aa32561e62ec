package mesh

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/rsbd/rsbd/mesh/frame"
)

// Errors callers branch on. Errors returned by the package wrap them with
// %w.
var (
	// ErrUnknownAdaptor: no adaptor is registered under the name.
	ErrUnknownAdaptor = errors.New("mesh: unknown adaptor")
	// ErrDuplicate: an adaptor is already registered under the name, or a
	// Config names one twice.
	ErrDuplicate = errors.New("mesh: adaptor registered twice")
	// ErrBadName: a protocol name is empty, longer than MaxNameLen or has a
	// character other than a–z, 0–9 and '-'.
	ErrBadName = errors.New("mesh: bad protocol name")
)

// Adaptor converts between one external protocol's messages and frames.
// An Adaptor is safe for concurrent use; it keeps no per-message state.
type Adaptor interface {
	// Protocol returns the name the adaptor is registered under.
	Protocol() string
	// ToFrame converts a message received in the protocol to a frame
	// (ingress). msg is untrusted: errors, never panics.
	ToFrame(msg []byte) (*frame.Frame, error)
	// FromFrame converts a frame to a message of the protocol (egress).
	FromFrame(f *frame.Frame) ([]byte, error)
}

// Registry maps protocol names to adaptors. The zero value is empty and
// ready; a Registry is safe for concurrent use.
type Registry struct {
	mu       sync.RWMutex
	adaptors map[string]Adaptor
}

// Register adds a under a.Protocol(). It fails with ErrBadName or
// ErrDuplicate.
func (r *Registry) Register(a Adaptor) error {
	name := a.Protocol()
	if err := ValidName(name); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.adaptors[name]; ok {
		return fmt.Errorf("%w: %q", ErrDuplicate, name)
	}
	if r.adaptors == nil {
		r.adaptors = make(map[string]Adaptor)
	}
	r.adaptors[name] = a
	return nil
}

// Lookup returns the adaptor registered under name; for an unknown name
// the error wraps ErrUnknownAdaptor and lists the known names.
func (r *Registry) Lookup(name string) (Adaptor, error) {
	r.mu.RLock()
	a, ok := r.adaptors[name]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q (registered: %s)", ErrUnknownAdaptor, name, r.known())
	}
	return a, nil
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.adaptors))
}

// known lists the registered names for an error message.
func (r *Registry) known() string {
	names := r.Names()
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// ValidName checks a protocol name: 1 to MaxNameLen characters, each a
// lowercase ASCII letter, a digit or '-'.
func ValidName(name string) error {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Errorf("%w: %q must have 1 to %d characters", ErrBadName, name, MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return fmt.Errorf("%w: %q has %q at byte %d", ErrBadName, name, c, i)
		}
	}
	return nil
}

// defaultRegistry is the registry adaptor packages register with.
var defaultRegistry Registry

// Register adds a to the process's registry. Adaptor packages call it from
// init; registering a bad or taken name is a programming error and panics,
// as registering a database driver twice does.
func Register(a Adaptor) {
	if err := defaultRegistry.Register(a); err != nil {
		panic(err)
	}
}

// Lookup returns the adaptor the process registered under name, or an
// error wrapping ErrUnknownAdaptor.
func Lookup(name string) (Adaptor, error) { return defaultRegistry.Lookup(name) }

// Names returns the names of the process's registered adaptors, sorted.
func Names() []string { return defaultRegistry.Names() }
