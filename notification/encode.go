package notification

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the RSB protocol messages (rsb/protocol/*.proto).
const (
	fieldScope      protowire.Number = 6
	fieldWireSchema protowire.Number = 7
	fieldData       protowire.Number = 9
	fieldCauses     protowire.Number = 13
	fieldMethod     protowire.Number = 14
	fieldMetaData   protowire.Number = 15
	fieldEventID    protowire.Number = 108

	fieldSenderID       protowire.Number = 1
	fieldSequenceNumber protowire.Number = 2

	fieldCreateTime  protowire.Number = 2
	fieldSendTime    protowire.Number = 3
	fieldReceiveTime protowire.Number = 4
	fieldDeliverTime protowire.Number = 5
	fieldUserTimes   protowire.Number = 6
	fieldUserInfos   protowire.Number = 7

	fieldKey       protowire.Number = 1
	fieldTimestamp protowire.Number = 2 // UserTime.timestamp
	fieldValue     protowire.Number = 2 // UserInfo.value
)

// Marshal encodes e as a Notification. It fails when e has no scope or
// exceeds the limits of params.go, which decoders would reject.
func Marshal(e *Event) ([]byte, error) {
	if err := CheckEncodable(e); err != nil {
		return nil, err
	}
	n := NotificationSize(e)
	return AppendNotificationSized(make([]byte, 0, n), e, n), nil
}

// CheckEncodable returns the error Marshal gives e, or nil when Marshal
// encodes it: for an encoder that appends e to memory of its own.
func CheckEncodable(e *Event) error {
	if e.Scope.IsZero() {
		return fmt.Errorf("%w: event has no scope", ErrBadScope)
	}
	if len(e.Causes) > MaxCauses || len(e.MetaData.UserTimes) > MaxUserTimes ||
		len(e.MetaData.UserInfos) > MaxUserInfos {
		return fmt.Errorf("%w: %d causes, %d user times, %d user infos", ErrTooMany,
			len(e.Causes), len(e.MetaData.UserTimes), len(e.MetaData.UserInfos))
	}
	return nil
}

// AppendNotification appends the Notification encoding of e to dst and
// returns the extended slice. The bytes equal deterministic marshalling of
// ToNotification(e) by the generated code: fields in field-number order,
// event_id (108) last. e.Scope should not be zero (see Marshal).
func AppendNotification(dst []byte, e *Event) []byte {
	return AppendNotificationSized(dst, e, NotificationSize(e))
}

// AppendNotificationSized is AppendNotification for a caller that already
// has size, NotificationSize(e): the event is not walked twice. It panics
// when size is not NotificationSize(e), a caller's error.
func AppendNotificationSized(dst []byte, e *Event, size int) []byte {
	start := len(dst)
	dst = slices.Grow(dst, size)[:start+size]
	p := putter{b: dst[start:]}
	p.notification(e)
	if p.i != size {
		panic(fmt.Sprintf("notification: encoded %d bytes, size said %d", p.i, size))
	}
	return dst
}

// NotificationSize returns the length of the Notification encoding of e.
func NotificationSize(e *Event) int {
	n := 0
	if !e.Scope.IsZero() {
		n += stringSize(fieldScope, e.Scope.String())
	}
	if e.hasWireSchema() {
		n += stringSize(fieldWireSchema, e.WireSchema)
	}
	if e.hasData() {
		n += protowire.SizeTag(fieldData) + protowire.SizeBytes(len(e.Data))
	}
	for _, c := range e.Causes {
		n += protowire.SizeTag(fieldCauses) + protowire.SizeBytes(eventIDSize(c))
	}
	if e.hasMethod() {
		n += stringSize(fieldMethod, e.Method)
	}
	if e.hasMetaData() {
		n += protowire.SizeTag(fieldMetaData) + protowire.SizeBytes(metaDataSize(e))
	}
	return n + protowire.SizeTag(fieldEventID) + protowire.SizeBytes(eventIDSize(e.ID))
}

func stringSize(num protowire.Number, s string) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(len(s))
}

func varintFieldSize(num protowire.Number, v uint64) int {
	return protowire.SizeTag(num) + protowire.SizeVarint(v)
}

func eventIDSize(id EventID) int {
	return protowire.SizeTag(fieldSenderID) + protowire.SizeBytes(len(id.SenderID)) +
		varintFieldSize(fieldSequenceNumber, uint64(id.SequenceNumber))
}

func metaDataSize(e *Event) int {
	m := &e.MetaData
	n := varintFieldSize(fieldCreateTime, uint64(m.CreateTime)) +
		varintFieldSize(fieldSendTime, uint64(m.SendTime))
	if e.hasReceiveTime() {
		n += varintFieldSize(fieldReceiveTime, uint64(m.ReceiveTime))
	}
	if e.hasDeliverTime() {
		n += varintFieldSize(fieldDeliverTime, uint64(m.DeliverTime))
	}
	for _, t := range m.UserTimes {
		n += protowire.SizeTag(fieldUserTimes) + protowire.SizeBytes(userTimeSize(t))
	}
	for _, u := range m.UserInfos {
		n += protowire.SizeTag(fieldUserInfos) + protowire.SizeBytes(userInfoSize(u))
	}
	return n
}

func userTimeSize(t UserTime) int {
	return stringSize(fieldKey, t.Key) + varintFieldSize(fieldTimestamp, t.Time)
}

func userInfoSize(u UserInfo) int {
	return stringSize(fieldKey, u.Key) + stringSize(fieldValue, u.Value)
}
