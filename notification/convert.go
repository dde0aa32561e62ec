package notification

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
	"github.com/rsbd/rsbd/scope"
)

// Sentinel errors of decoding and conversion. Decoding errors wrap exactly one
// of them.
var (
	// ErrMalformed: the bytes are not a well-formed Notification (bad
	// protobuf framing or a required field missing).
	ErrMalformed = errors.New("notification: malformed notification")
	// ErrMissingEventID: the Notification has no event_id.
	ErrMissingEventID = errors.New("notification: missing event id")
	// ErrBadSenderID: an event id's sender_id is missing or not 16 bytes.
	ErrBadSenderID = errors.New("notification: sender id is not 16 bytes")
	// ErrBadScope: the scope is missing or not a valid RSB scope.
	ErrBadScope = errors.New("notification: bad scope")
	// ErrTooMany: more causes, user times or user infos than params.go allows.
	ErrTooMany = errors.New("notification: limit exceeded")
)

// ToNotification converts e to the generated Notification. Byte slices of
// the result alias e.Data; strings are copied. e.Scope must not be zero (the
// scope is left out otherwise, and FromNotification rejects the result).
func ToNotification(e *Event) *rsbpb.Notification {
	n := &rsbpb.Notification{EventId: toEventID(e.ID)}
	if !e.Scope.IsZero() {
		n.Scope = []byte(e.Scope.String())
	}
	if e.hasMethod() {
		n.Method = append([]byte{}, e.Method...)
	}
	if e.hasWireSchema() {
		n.WireSchema = append([]byte{}, e.WireSchema...)
	}
	if e.hasData() {
		n.Data = e.Data
		if n.Data == nil {
			n.Data = []byte{}
		}
	}
	for _, c := range e.Causes {
		n.Causes = append(n.Causes, toEventID(c))
	}
	if e.hasMetaData() {
		n.MetaData = toMetaData(e)
	}
	return n
}

func toEventID(id EventID) *rsbpb.EventId {
	return &rsbpb.EventId{SenderId: append([]byte(nil), id.SenderID[:]...), SequenceNumber: proto.Uint32(id.SequenceNumber)}
}

func toMetaData(e *Event) *rsbpb.EventMetaData {
	m := &e.MetaData
	md := &rsbpb.EventMetaData{CreateTime: proto.Int64(m.CreateTime), SendTime: proto.Int64(m.SendTime)}
	if e.hasReceiveTime() {
		md.ReceiveTime = proto.Int64(m.ReceiveTime)
	}
	if e.hasDeliverTime() {
		md.DeliverTime = proto.Int64(m.DeliverTime)
	}
	for _, t := range m.UserTimes {
		md.UserTimes = append(md.UserTimes, &rsbpb.UserTime{Key: append([]byte{}, t.Key...), Timestamp: proto.Uint64(t.Time)})
	}
	for _, u := range m.UserInfos {
		md.UserInfos = append(md.UserInfos, &rsbpb.UserInfo{Key: append([]byte{}, u.Key...), Value: append([]byte{}, u.Value...)})
	}
	return md
}

// FromNotification converts a generated Notification to an Event, checking
// what RSB requires: an event_id whose sender_id is 16 bytes, a valid scope
// (normalized on the way), every required field of the nested messages, and
// the limits of params.go. It does not rely on proto.Unmarshal's required
// field check, so it also validates Notifications built in code or decoded
// with AllowPartial. e.Data aliases n.Data.
func FromNotification(n *rsbpb.Notification) (*Event, error) {
	if n.EventId == nil {
		return nil, ErrMissingEventID
	}
	id, err := fromEventID(n.EventId)
	if err != nil {
		return nil, fmt.Errorf("event id: %w", err)
	}
	sc, err := parseScope(n.Scope)
	if err != nil {
		return nil, err
	}
	e := &Event{Scope: sc, ID: id, Method: string(n.Method), WireSchema: string(n.WireSchema)}
	if len(n.Data) > 0 {
		e.Data = n.Data
	}
	e.Present = presentIf(n.Method != nil, HasMethod) | presentIf(n.WireSchema != nil, HasWireSchema) |
		presentIf(n.Data != nil, HasData)
	if len(n.Causes) > MaxCauses {
		return nil, fmt.Errorf("%w: %d causes (max %d)", ErrTooMany, len(n.Causes), MaxCauses)
	}
	for i, c := range n.Causes {
		id, err := fromEventID(c)
		if err != nil {
			return nil, fmt.Errorf("cause %d: %w", i, err)
		}
		e.Causes = append(e.Causes, id)
	}
	if n.MetaData != nil {
		if err := fromMetaData(e, n.MetaData); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func presentIf(cond bool, p Presence) Presence {
	if cond {
		return p
	}
	return 0
}

func fromEventID(id *rsbpb.EventId) (EventID, error) {
	var out EventID
	if len(id.SenderId) != len(out.SenderID) {
		return out, fmt.Errorf("%w: %d bytes", ErrBadSenderID, len(id.SenderId))
	}
	if id.SequenceNumber == nil {
		return out, fmt.Errorf("%w: event id without sequence number", ErrMalformed)
	}
	copy(out.SenderID[:], id.SenderId)
	out.SequenceNumber = *id.SequenceNumber
	return out, nil
}

func fromMetaData(e *Event, md *rsbpb.EventMetaData) error {
	if md.CreateTime == nil || md.SendTime == nil {
		return fmt.Errorf("%w: meta data without create or send time", ErrMalformed)
	}
	if len(md.UserTimes) > MaxUserTimes || len(md.UserInfos) > MaxUserInfos {
		return fmt.Errorf("%w: %d user times, %d user infos (max %d, %d)",
			ErrTooMany, len(md.UserTimes), len(md.UserInfos), MaxUserTimes, MaxUserInfos)
	}
	m := &e.MetaData
	m.CreateTime, m.SendTime = *md.CreateTime, *md.SendTime
	m.ReceiveTime, m.DeliverTime = md.GetReceiveTime(), md.GetDeliverTime()
	e.Present |= HasMetaData | presentIf(md.ReceiveTime != nil, HasReceiveTime) |
		presentIf(md.DeliverTime != nil, HasDeliverTime)
	for _, t := range md.UserTimes {
		if t.Key == nil || t.Timestamp == nil {
			return fmt.Errorf("%w: user time without key or timestamp", ErrMalformed)
		}
		m.UserTimes = append(m.UserTimes, UserTime{Key: string(t.Key), Time: *t.Timestamp})
	}
	for _, u := range md.UserInfos {
		if u.Key == nil || u.Value == nil {
			return fmt.Errorf("%w: user info without key or value", ErrMalformed)
		}
		m.UserInfos = append(m.UserInfos, UserInfo{Key: string(u.Key), Value: string(u.Value)})
	}
	return nil
}

// parseScope validates a scope field; absent and empty scopes are errors.
func parseScope(b []byte) (scope.Scope, error) {
	if b == nil {
		return scope.Scope{}, fmt.Errorf("%w: no scope", ErrBadScope)
	}
	sc, err := scope.Parse(string(b))
	if err != nil {
		return scope.Scope{}, fmt.Errorf("%w: %w", ErrBadScope, err)
	}
	return sc, nil
}
