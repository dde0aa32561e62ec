package notification

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"unicode/utf8"

	"github.com/rsbd/rsbd/scope"
)

// The wire schemas of the built-in converters.
const (
	SchemaVoid        = "void"
	SchemaBool        = "bool"
	SchemaInt32       = "int32"
	SchemaUint32      = "uint32"
	SchemaInt64       = "int64"
	SchemaUint64      = "uint64"
	SchemaFloat       = "float"
	SchemaDouble      = "double"
	SchemaUTF8String  = "utf-8-string"
	SchemaASCIIString = "ascii-string"
	SchemaBytes       = "bytes"
	SchemaByteArray   = ".*"
	SchemaScope       = "scope"
)

var voidType = reflect.TypeFor[struct{}]()

// funcConverter is a Converter made of two functions.
type funcConverter struct {
	schema string
	typ    reflect.Type
	ser    func(v any) ([]byte, error)
	de     func(data []byte) (any, error)
}

func (c *funcConverter) WireSchema() string                   { return c.schema }
func (c *funcConverter) GoType() reflect.Type                 { return c.typ }
func (c *funcConverter) Serialize(v any) ([]byte, error)      { return c.ser(v) }
func (c *funcConverter) Deserialize(data []byte) (any, error) { return c.de(data) }

// typed builds a converter for Go type T whose functions see a T.
func typed[T any](schema string, ser func(T) ([]byte, error), de func([]byte) (T, error)) Converter {
	return &funcConverter{
		schema: schema,
		typ:    reflect.TypeFor[T](),
		ser: func(v any) ([]byte, error) {
			t, ok := v.(T)
			if !ok {
				return nil, fmt.Errorf("%w: %s wants %v, got %T", ErrWrongType, schema, reflect.TypeFor[T](), v)
			}
			return ser(t)
		},
		de: func(data []byte) (any, error) {
			t, err := de(data)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrBadPayload, schema, err)
			}
			return t, nil
		},
	}
}

// fixed builds a converter for a fixed-width little-endian number.
func fixed[T any](schema string, size int, put func([]byte, T), get func([]byte) T) Converter {
	return typed(schema,
		func(v T) ([]byte, error) {
			b := make([]byte, size)
			put(b, v)
			return b, nil
		},
		func(b []byte) (T, error) {
			var zero T
			if len(b) != size {
				return zero, fmt.Errorf("%d bytes, want %d", len(b), size)
			}
			return get(b), nil
		})
}

var le = binary.LittleEndian

func builtinConverters() []Converter {
	return []Converter{
		voidConverter(),
		typed(SchemaBool, serializeBool, deserializeBool),
		fixed(SchemaInt32, 4, func(b []byte, v int32) { le.PutUint32(b, uint32(v)) }, func(b []byte) int32 { return int32(le.Uint32(b)) }),
		fixed(SchemaUint32, 4, le.PutUint32, le.Uint32),
		fixed(SchemaInt64, 8, func(b []byte, v int64) { le.PutUint64(b, uint64(v)) }, func(b []byte) int64 { return int64(le.Uint64(b)) }),
		fixed(SchemaUint64, 8, le.PutUint64, le.Uint64),
		fixed(SchemaFloat, 4, func(b []byte, v float32) { le.PutUint32(b, math.Float32bits(v)) }, func(b []byte) float32 { return math.Float32frombits(le.Uint32(b)) }),
		fixed(SchemaDouble, 8, func(b []byte, v float64) { le.PutUint64(b, math.Float64bits(v)) }, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }),
		typed(SchemaUTF8String, serializeUTF8, deserializeUTF8),
		typed(SchemaASCIIString, serializeASCII, deserializeASCII),
		typed(SchemaBytes, serializeBytes, deserializeBytes),
		typed(SchemaByteArray, serializeBytes, deserializeBytes),
		typed(SchemaScope, serializeScope, deserializeScope),
	}
}

// voidConverter carries no value: struct{}{} or nil, and an empty payload.
func voidConverter() Converter {
	return &funcConverter{
		schema: SchemaVoid,
		typ:    voidType,
		ser: func(v any) ([]byte, error) {
			if v != nil && v != (struct{}{}) {
				return nil, fmt.Errorf("%w: void wants nil or struct{}, got %T", ErrWrongType, v)
			}
			return []byte{}, nil
		},
		de: func(data []byte) (any, error) {
			if len(data) != 0 {
				return nil, fmt.Errorf("%w: void: %d bytes, want 0", ErrBadPayload, len(data))
			}
			return struct{}{}, nil
		},
	}
}

func serializeBool(v bool) ([]byte, error) {
	if v {
		return []byte{1}, nil
	}
	return []byte{0}, nil
}

func deserializeBool(b []byte) (bool, error) {
	if len(b) != 1 || b[0] > 1 {
		return false, fmt.Errorf("want one byte 0 or 1, got % x", b)
	}
	return b[0] == 1, nil
}

func serializeUTF8(s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("%w: utf-8-string: invalid UTF-8", ErrInvalidValue)
	}
	return []byte(s), nil
}

func deserializeUTF8(b []byte) (string, error) {
	if !utf8.Valid(b) {
		return "", errors.New("invalid UTF-8")
	}
	return string(b), nil
}

// firstNonASCII returns the index of the first byte >= 0x80, or -1.
func firstNonASCII[S ~string | ~[]byte](s S) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return i
		}
	}
	return -1
}

func serializeASCII(s string) ([]byte, error) {
	if i := firstNonASCII(s); i >= 0 {
		return nil, fmt.Errorf("%w: ascii-string: non-ASCII byte 0x%02x at %d", ErrInvalidValue, s[i], i)
	}
	return []byte(s), nil
}

func deserializeASCII(b []byte) (string, error) {
	if i := firstNonASCII(b); i >= 0 {
		return "", fmt.Errorf("non-ASCII byte 0x%02x at %d", b[i], i)
	}
	return string(b), nil
}

// serializeBytes returns v itself: the payload aliases the value.
func serializeBytes(v []byte) ([]byte, error) {
	if v == nil {
		return []byte{}, nil
	}
	return v, nil
}

// deserializeBytes returns the payload itself: the value aliases it.
func deserializeBytes(b []byte) ([]byte, error) { return b, nil }

func serializeScope(s scope.Scope) ([]byte, error) {
	if s.IsZero() {
		return nil, fmt.Errorf("%w: scope: the zero Scope", ErrInvalidValue)
	}
	return []byte(s.String()), nil
}

func deserializeScope(b []byte) (scope.Scope, error) {
	return scope.Parse(string(b))
}
