package client

import (
	"reflect"
	"sync/atomic"

	"github.com/rsbd/rsbd/notification"
)

// A registry never changes the converter it gives a Go type or a wire
// schema once it gives one (Register only adds), so a participant may
// remember the last one it used. An informer's payloads are mostly of one
// type and a listener's events of one schema: the memories below save the
// registry's map lookup per event (about 30 ns of an informer's publish in
// the 64 B benchmark's profiles). Both are safe for concurrent use; a
// participant whose types or schemas alternate still gets the right
// converter, from the registry.

// typeMemo remembers the converter of the last payload type looked up.
type typeMemo struct{ last atomic.Pointer[typeConverter] }

// typeConverter is a payload type and its converter.
type typeConverter struct {
	t reflect.Type
	c notification.Converter
}

// converter returns reg's converter for v's type (void's for nil).
func (m *typeMemo) converter(reg *notification.Registry, v any) (notification.Converter, error) {
	t := reflect.TypeOf(v)
	if last := m.last.Load(); last != nil && last.t == t {
		return last.c, nil
	}
	c, err := reg.ForValue(v)
	if err == nil {
		m.last.Store(&typeConverter{t: t, c: c})
	}
	return c, err
}

// schemaMemo remembers the converter of the last wire schema looked up.
type schemaMemo struct {
	last atomic.Pointer[schemaConverter]
}

// schemaConverter is a wire schema and its converter.
type schemaConverter struct {
	schema string
	c      notification.Converter
}

// deserialize converts data of wire schema schema with reg's converter,
// as reg.Deserialize does. A nil m remembers nothing.
func (m *schemaMemo) deserialize(reg *notification.Registry, schema string, data []byte) (any, error) {
	if m != nil {
		if last := m.last.Load(); last != nil && last.schema == schema {
			return last.c.Deserialize(data)
		}
	}
	c, err := reg.ForSchema(schema)
	if err != nil {
		return nil, err
	}
	if m != nil {
		m.last.Store(&schemaConverter{schema: schema, c: c})
	}
	return c.Deserialize(data)
}
