package client

import (
	"reflect"
	"sync/atomic"

	"github.com/rsbd/rsbd/notification"
)

// lastConverter remembers the converter a participant last looked up, by
// its key: the payload's Go type for an informer, the wire schema for a
// receiver. A registry never changes the converter it gives a type or a
// schema once it gives one (Register only adds), so the memory never goes
// stale; an informer's payloads are mostly of one type and a listener's
// events of one schema, and the memory saves the registry's map lookup per
// event, a share of a small event's publish and delivery that profiles of
// BenchmarkInformerListener show.
// It is safe for concurrent use; keys that alternate still get the right
// converter, from the registry. A nil lastConverter remembers nothing.
type lastConverter[K comparable] struct {
	last atomic.Pointer[keyedConverter[K]]
}

// keyedConverter is a key and its converter.
type keyedConverter[K comparable] struct {
	key K
	c   notification.Converter
}

// lookup returns the converter of key: the remembered one, or find's.
func (m *lastConverter[K]) lookup(key K, find func() (notification.Converter, error)) (notification.Converter, error) {
	if m != nil {
		if last := m.last.Load(); last != nil && last.key == key {
			return last.c, nil
		}
	}
	c, err := find()
	if err == nil && m != nil {
		m.last.Store(&keyedConverter[K]{key: key, c: c})
	}
	return c, err
}

// converterFor returns reg's converter for v's type (void's for nil),
// through an informer's memory m.
func converterFor(m *lastConverter[reflect.Type], reg *notification.Registry, v any) (notification.Converter, error) {
	return m.lookup(reflect.TypeOf(v), func() (notification.Converter, error) { return reg.ForValue(v) })
}

// deserialize converts data of wire schema schema with reg's converter, as
// reg.Deserialize does, through a receiver's memory m (nil: none).
func deserialize(m *lastConverter[string], reg *notification.Registry, schema string, data []byte) (any, error) {
	c, err := m.lookup(schema, func() (notification.Converter, error) { return reg.ForSchema(schema) })
	if err != nil {
		return nil, err
	}
	return c.Deserialize(data)
}
