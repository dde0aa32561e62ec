package notification

import (
	"bytes"
	"slices"

	"github.com/rsbd/rsbd/scope"
)

// Event is an RSB event as rsbd handles it: the header fields of a
// Notification and the serialized payload.
//
// Optional Notification fields are written when their value is non-empty
// (non-zero) or their Presence bit is set; decoding sets the bit of every
// optional field that was on the wire. So decoding and re-encoding keeps
// "absent" and "present but empty" apart and reproduces the input bytes of
// every canonically encoded Notification, and events built in code need no
// flags.
type Event struct {
	// Scope is the scope the event was published on. It must not be zero.
	Scope scope.Scope
	// Method is the RSB method, e.g. "REQUEST", "REPLY", "SURVEY" or "".
	Method string
	// WireSchema names the payload encoding, e.g. "utf-8-string" or
	// ".rsb.protocol.introspection.Hello".
	WireSchema string
	// Data is the serialized payload.
	Data []byte
	// ID identifies the event.
	ID EventID
	// Causes lists the ids of the events that caused this one (RPC replies
	// carry the request id first).
	Causes []EventID
	// MetaData holds the timestamps and user-defined times and infos.
	MetaData MetaData
	// Present records optional fields that are on the wire although empty.
	Present Presence
}

// Presence is a set of optional Notification fields that are present on the
// wire even when their value is empty or zero.
type Presence uint8

// The optional fields whose presence Event records.
const (
	// HasMethod marks Notification.method as present.
	HasMethod Presence = 1 << iota
	// HasWireSchema marks Notification.wire_schema as present.
	HasWireSchema
	// HasData marks Notification.data as present.
	HasData
	// HasMetaData marks Notification.meta_data as present.
	HasMetaData
	// HasReceiveTime marks EventMetaData.receive_time as present.
	HasReceiveTime
	// HasDeliverTime marks EventMetaData.deliver_time as present.
	HasDeliverTime
)

// MetaData carries an event's timestamps, all in microseconds since the Unix
// epoch (UTC), and its user-defined times and infos in wire order. RSB
// requires user keys to be unique; the wire may still repeat them, and the
// lookups then return the first entry.
type MetaData struct {
	CreateTime  int64
	SendTime    int64
	ReceiveTime int64
	DeliverTime int64
	UserTimes   []UserTime
	UserInfos   []UserInfo
}

// UserTime is a named timestamp in microseconds since the Unix epoch.
type UserTime struct {
	Key  string
	Time uint64
}

// UserInfo is a named string attached to an event.
type UserInfo struct {
	Key   string
	Value string
}

// UserTime returns the time stored under key.
func (m *MetaData) UserTime(key string) (uint64, bool) {
	for _, t := range m.UserTimes {
		if t.Key == key {
			return t.Time, true
		}
	}
	return 0, false
}

// UserInfo returns the value stored under key.
func (m *MetaData) UserInfo(key string) (string, bool) {
	for _, u := range m.UserInfos {
		if u.Key == key {
			return u.Value, true
		}
	}
	return "", false
}

// SetUserTime sets the time of key, replacing the first entry with that key
// or appending a new one.
func (m *MetaData) SetUserTime(key string, t uint64) {
	for i := range m.UserTimes {
		if m.UserTimes[i].Key == key {
			m.UserTimes[i].Time = t
			return
		}
	}
	m.UserTimes = append(m.UserTimes, UserTime{Key: key, Time: t})
}

// SetUserInfo sets the value of key, replacing the first entry with that key
// or appending a new one.
func (m *MetaData) SetUserInfo(key, value string) {
	for i := range m.UserInfos {
		if m.UserInfos[i].Key == key {
			m.UserInfos[i].Value = value
			return
		}
	}
	m.UserInfos = append(m.UserInfos, UserInfo{Key: key, Value: value})
}

// hasMethod and the following report whether an encoder writes the field.
func (e *Event) hasMethod() bool     { return e.Method != "" || e.Present&HasMethod != 0 }
func (e *Event) hasWireSchema() bool { return e.WireSchema != "" || e.Present&HasWireSchema != 0 }
func (e *Event) hasData() bool       { return len(e.Data) > 0 || e.Present&HasData != 0 }
func (e *Event) hasReceiveTime() bool {
	return e.MetaData.ReceiveTime != 0 || e.Present&HasReceiveTime != 0
}
func (e *Event) hasDeliverTime() bool {
	return e.MetaData.DeliverTime != 0 || e.Present&HasDeliverTime != 0
}
func (e *Event) hasMetaData() bool {
	m := &e.MetaData
	return e.Present&HasMetaData != 0 || m.CreateTime != 0 || m.SendTime != 0 ||
		e.hasReceiveTime() || e.hasDeliverTime() || len(m.UserTimes) > 0 || len(m.UserInfos) > 0
}

// wirePresence returns the set of optional fields an encoder writes for e.
func (e *Event) wirePresence() Presence {
	var p Presence
	for _, f := range []struct {
		bit Presence
		on  bool
	}{
		{HasMethod, e.hasMethod()}, {HasWireSchema, e.hasWireSchema()}, {HasData, e.hasData()},
		{HasMetaData, e.hasMetaData()}, {HasReceiveTime, e.hasReceiveTime()},
		{HasDeliverTime, e.hasDeliverTime()},
	} {
		if f.on {
			p |= f.bit
		}
	}
	return p
}

// Equal reports whether e and o encode to the same Notification: equal
// fields (nil and empty slices are equal) and the same optional fields on
// the wire.
func (e *Event) Equal(o *Event) bool {
	if e == nil || o == nil {
		return e == o
	}
	return e.Scope == o.Scope && e.Method == o.Method && e.WireSchema == o.WireSchema &&
		bytes.Equal(e.Data, o.Data) && e.ID == o.ID && slices.Equal(e.Causes, o.Causes) &&
		e.MetaData.equal(&o.MetaData) && e.wirePresence() == o.wirePresence()
}

func (m *MetaData) equal(o *MetaData) bool {
	return m.CreateTime == o.CreateTime && m.SendTime == o.SendTime &&
		m.ReceiveTime == o.ReceiveTime && m.DeliverTime == o.DeliverTime &&
		slices.Equal(m.UserTimes, o.UserTimes) && slices.Equal(m.UserInfos, o.UserInfos)
}

// Clone returns a deep copy of e.
func (e *Event) Clone() *Event {
	c := *e
	c.Data = bytes.Clone(e.Data)
	c.Causes = slices.Clone(e.Causes)
	c.MetaData.UserTimes = slices.Clone(e.MetaData.UserTimes)
	c.MetaData.UserInfos = slices.Clone(e.MetaData.UserInfos)
	return &c
}
