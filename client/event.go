package client

import (
	"time"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// Event is an RSB event as participants see it: the wire view (scope,
// method, wire schema, serialized Data, id, causes, meta data) and the
// payload converted by the Bus's registry.
//
// Events handed to handlers and readers share their slices with the other
// local participants that received them (and the user infos of an event
// published in the same process with other events that carry the same):
// treat them as read-only.
type Event struct {
	notification.Event
	// Payload is the converted payload. When publishing, nil means void
	// unless Data is set (then Data is sent as is with WireSchema).
	Payload any
	// PayloadErr is set on received events whose Data the registry could
	// not convert (unknown wire schema or bad payload); Payload is then nil.
	PayloadErr error

	// slab, on an event lent to a listener WithoutRetention, is the
	// receive slab its data lies in, released when the event is given back.
	slab *recvSlab
	// home, on an event a socket link's reader decoded into, is the
	// link's stash it goes back to when given back; nil: the shared pool.
	home *eventStash
}

// Filter decides on the wire view of a received event, before its payload is
// converted, whether a participant wants it. Filters run on the goroutine
// that receives from the bus and must be quick and must not block.
type Filter func(ev *notification.Event) bool

// ScopeFilter passes events on sc and its sub-scopes.
func ScopeFilter(sc scope.Scope) Filter {
	return func(ev *notification.Event) bool { return sc.Contains(ev.Scope) }
}

// MethodFilter passes events whose method is m ("" passes events without one).
func MethodFilter(m string) Filter {
	return func(ev *notification.Event) bool { return ev.Method == m }
}

// OriginFilter passes events sent by the participant with the given id.
func OriginFilter(id [16]byte) Filter {
	return func(ev *notification.Event) bool { return ev.ID.SenderID == id }
}

// WireSchemaFilter passes events whose wire schema is s.
func WireSchemaFilter(s string) Filter {
	return func(ev *notification.Event) bool { return ev.WireSchema == s }
}

// passes reports whether ev passes every filter.
func passes(filters []Filter, ev *notification.Event) bool {
	for _, f := range filters {
		if !f(ev) {
			return false
		}
	}
	return true
}

// item is a received event as a sink gets it and as it waits in a
// participant's queue.
type item struct {
	// ev is the wire view, shared with the other sinks: read-only.
	ev *notification.Event
	// own, when set, is the event ev lies in (ev == &own.Event), given to
	// this sink alone: its participant takes own as its event instead of
	// a copy.
	own  *Event
	recv int64 // receive time, µs
}

// toEvent builds the participant's view of a received event: the event
// given to it alone, or a copy of the shared wire view (from the pool of
// reusable events when borrow is set), with receive and deliver times and
// the payload converted by reg (through the participant's memory of its
// last schema, or none when schemas is nil); a nil reg converts nothing.
func toEvent(reg *notification.Registry, schemas *lastConverter[string], it item, borrow bool) *Event {
	out := it.own
	if out == nil {
		if borrow {
			out = takeEvent()
		} else {
			out = new(Event)
		}
		out.Event = *it.ev
	}
	out.MetaData.ReceiveTime = it.recv
	out.MetaData.DeliverTime = nowMicros()
	out.Present |= notification.HasReceiveTime | notification.HasDeliverTime
	if reg == nil {
		out.Payload, out.PayloadErr = nil, nil
		return out
	}
	out.Payload, out.PayloadErr = deserialize(schemas, reg, out.WireSchema, out.Data)
	if out.PayloadErr != nil {
		out.Payload = nil
	}
	return out
}

// Time converts an RSB timestamp (µs since the epoch) to a time.Time; zero
// stays the zero Time.
func Time(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us)
}
