package notification

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/proto/rsbpb/introspection"
)

// Sentinel errors of converters and the Registry.
var (
	// ErrUnknownSchema: no converter is registered for a wire schema.
	ErrUnknownSchema = errors.New("notification: unknown wire schema")
	// ErrNoConverter: no converter is registered for a Go type.
	ErrNoConverter = errors.New("notification: no converter for Go type")
	// ErrDuplicateSchema: a converter for the wire schema is already registered.
	ErrDuplicateSchema = errors.New("notification: wire schema already registered")
	// ErrWrongType: Serialize got a value of a type the converter does not handle.
	ErrWrongType = errors.New("notification: value has the wrong type")
	// ErrInvalidValue: Serialize got a value of the right type that the wire
	// schema cannot carry (a non-ASCII ascii-string, the zero scope).
	ErrInvalidValue = errors.New("notification: value not representable in wire schema")
	// ErrBadPayload: Deserialize got bytes that are not a valid payload of the
	// schema (wrong length, invalid text, malformed message).
	ErrBadPayload = errors.New("notification: bad payload")
)

// Converter maps Go values of one type to and from the payload bytes of one
// RSB wire schema. Deserialize must accept any bytes without panicking; the
// value it returns may alias its input.
type Converter interface {
	// WireSchema returns the wire schema name, e.g. "utf-8-string".
	WireSchema() string
	// GoType returns the type Serialize accepts and Deserialize returns.
	GoType() reflect.Type
	// Serialize encodes v, which must have GoType (errors wrap ErrWrongType
	// or ErrInvalidValue).
	Serialize(v any) ([]byte, error)
	// Deserialize decodes a payload (errors wrap ErrBadPayload).
	Deserialize(data []byte) (any, error)
}

// Registry finds converters by wire schema and by Go type. Several schemas
// may share a Go type ([]byte: bytes and .*; string: utf-8-string and
// ascii-string); the first registered one serves lookups by type. A Registry
// is safe for concurrent use; its zero value is empty and ready. Lookups
// take no lock: Register, rare, publishes new tables copied from the old
// (copy on write), so that the lookups of every event, on several
// goroutines at once, share nothing they write to.
type Registry struct {
	mu     sync.Mutex // serializes Register
	tables atomic.Pointer[registryTables]
}

// registryTables is one immutable state of a Registry.
type registryTables struct {
	bySchema map[string]Converter
	byType   map[reflect.Type]Converter
}

// DefaultRegistry returns a new Registry holding a converter for every RSB
// wire schema: void, bool, int32, uint32, int64, uint64, float, double,
// utf-8-string, ascii-string, bytes, .*, scope and the introspection Hello
// and Bye messages. Lookups by type give utf-8-string for string and bytes
// for []byte.
func DefaultRegistry() *Registry {
	r := new(Registry)
	for _, c := range builtinConverters() {
		r.mustRegister(c)
	}
	r.mustRegister(NewProtoConverter(&introspection.Hello{}))
	r.mustRegister(NewProtoConverter(&introspection.Bye{}))
	return r
}

func (r *Registry) mustRegister(c Converter) {
	if err := r.Register(c); err != nil {
		panic(err) // the built-in schemas are distinct
	}
}

// load returns the current tables; nil for an empty Registry.
func (r *Registry) load() *registryTables { return r.tables.Load() }

// Register adds c. It fails if c's wire schema is already registered.
func (r *Registry) Register(c Converter) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	schema := c.WireSchema()
	old := r.load()
	next := &registryTables{bySchema: map[string]Converter{}, byType: map[reflect.Type]Converter{}}
	if old != nil {
		if _, ok := old.bySchema[schema]; ok {
			return fmt.Errorf("%w: %q", ErrDuplicateSchema, schema)
		}
		maps.Copy(next.bySchema, old.bySchema)
		maps.Copy(next.byType, old.byType)
	}
	next.bySchema[schema] = c
	if _, ok := next.byType[c.GoType()]; !ok {
		next.byType[c.GoType()] = c
	}
	r.tables.Store(next)
	return nil
}

// ForSchema returns the converter of a wire schema.
func (r *Registry) ForSchema(schema string) (Converter, error) {
	if t := r.load(); t != nil {
		if c, ok := t.bySchema[schema]; ok {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownSchema, schema)
}

// ForType returns the converter serving Go type t.
func (r *Registry) ForType(t reflect.Type) (Converter, error) {
	if tb := r.load(); tb != nil {
		if c, ok := tb.byType[t]; ok {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%w: %v", ErrNoConverter, t)
}

// ForValue returns the converter serving the type of v; nil maps to void's
// type struct{}.
func (r *Registry) ForValue(v any) (Converter, error) {
	if v == nil {
		return r.ForType(voidType)
	}
	return r.ForType(reflect.TypeOf(v))
}

// Serialize encodes v with the converter of its type and returns the wire
// schema and the payload.
func (r *Registry) Serialize(v any) (schema string, data []byte, err error) {
	c, err := r.ForValue(v)
	if err != nil {
		return "", nil, err
	}
	data, err = c.Serialize(v)
	if err != nil {
		return "", nil, err
	}
	return c.WireSchema(), data, nil
}

// Deserialize decodes a payload with the converter of its wire schema.
func (r *Registry) Deserialize(schema string, data []byte) (any, error) {
	c, err := r.ForSchema(schema)
	if err != nil {
		return nil, err
	}
	return c.Deserialize(data)
}

// Schemas returns the registered wire schemas in no particular order.
func (r *Registry) Schemas() []string {
	t := r.load()
	if t == nil {
		return []string{}
	}
	out := make([]string, 0, len(t.bySchema))
	for s := range t.bySchema {
		out = append(out, s)
	}
	return out
}
