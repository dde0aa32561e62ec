package notification

import (
	"fmt"
	"reflect"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ProtoConverter converts one generated protobuf message type; its wire
// schema is "." followed by the message's full name, as RSB names protobuf
// payloads (e.g. ".rsb.protocol.introspection.Hello").
type ProtoConverter struct {
	mt     protoreflect.MessageType
	typ    reflect.Type
	schema string
}

// NewProtoConverter returns a converter for the type of m (any value of the
// type will do, e.g. &introspection.Hello{}).
func NewProtoConverter(m proto.Message) *ProtoConverter {
	mt := m.ProtoReflect().Type()
	return &ProtoConverter{
		mt:     mt,
		typ:    reflect.TypeOf(m),
		schema: "." + string(mt.Descriptor().FullName()),
	}
}

// WireSchema returns "." + the message's full name.
func (c *ProtoConverter) WireSchema() string { return c.schema }

// GoType returns the message's Go type (a pointer to the generated struct).
func (c *ProtoConverter) GoType() reflect.Type { return c.typ }

// Serialize marshals v deterministically; missing required fields are an
// error.
func (c *ProtoConverter) Serialize(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok || reflect.TypeOf(v) != c.typ {
		return nil, fmt.Errorf("%w: %s wants %v, got %T", ErrWrongType, c.schema, c.typ, v)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidValue, c.schema, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// Deserialize unmarshals a new message; missing required fields are an
// error.
func (c *ProtoConverter) Deserialize(data []byte) (any, error) {
	m := c.mt.New().Interface()
	if err := proto.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadPayload, c.schema, err)
	}
	return m, nil
}
