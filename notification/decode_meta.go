package notification

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// metaDecoder decodes EventMetaData into an Event's MetaData, merging
// repeated occurrences, and remembers which timestamps it saw.
type metaDecoder struct {
	hasCreate, hasSend, hasReceive, hasDeliver bool
}

func (d *metaDecoder) decode(m *MetaData, b []byte) error {
	r := fieldReader{b: b}
	for r.next() {
		var err error
		switch {
		case r.typ == protowire.VarintType:
			d.time(m, r.num, int64(r.x))
		case r.typ == protowire.BytesType && r.num == fieldUserTimes:
			err = userTime(m, r.v)
		case r.typ == protowire.BytesType && r.num == fieldUserInfos:
			err = userInfo(m, r.v)
		}
		if err != nil {
			return err
		}
	}
	return r.err
}

func (d *metaDecoder) time(m *MetaData, num protowire.Number, t int64) {
	switch num {
	case fieldCreateTime:
		m.CreateTime, d.hasCreate = t, true
	case fieldSendTime:
		m.SendTime, d.hasSend = t, true
	case fieldReceiveTime:
		m.ReceiveTime, d.hasReceive = t, true
	case fieldDeliverTime:
		m.DeliverTime, d.hasDeliver = t, true
	}
}

// check verifies the required timestamps of present meta data and records
// the presence of the optional ones in e.
func (d *metaDecoder) check(e *Event) error {
	if e.Present&HasMetaData == 0 {
		return nil
	}
	if !d.hasCreate || !d.hasSend {
		return fmt.Errorf("%w: meta data without create or send time", ErrMalformed)
	}
	e.Present |= presentIf(d.hasReceive, HasReceiveTime) | presentIf(d.hasDeliver, HasDeliverTime)
	return nil
}

func userTime(m *MetaData, b []byte) error {
	if len(m.UserTimes) >= MaxUserTimes {
		return fmt.Errorf("%w: more than %d user times", ErrTooMany, MaxUserTimes)
	}
	var key []byte
	var t uint64
	var hasKey, hasTime bool
	r := fieldReader{b: b}
	for r.next() {
		switch {
		case r.num == fieldKey && r.typ == protowire.BytesType:
			key, hasKey = r.v, true
		case r.num == fieldTimestamp && r.typ == protowire.VarintType:
			t, hasTime = r.x, true
		}
	}
	if r.err != nil {
		return r.err
	}
	if !hasKey || !hasTime {
		return fmt.Errorf("%w: user time without key or timestamp", ErrMalformed)
	}
	m.UserTimes = append(m.UserTimes, UserTime{Key: string(key), Time: t})
	return nil
}

func userInfo(m *MetaData, b []byte) error {
	if len(m.UserInfos) >= MaxUserInfos {
		return fmt.Errorf("%w: more than %d user infos", ErrTooMany, MaxUserInfos)
	}
	var key, value []byte
	var hasKey, hasValue bool
	r := fieldReader{b: b}
	for r.next() {
		if r.typ != protowire.BytesType {
			continue
		}
		switch r.num {
		case fieldKey:
			key, hasKey = r.v, true
		case fieldValue:
			value, hasValue = r.v, true
		}
	}
	if r.err != nil {
		return r.err
	}
	if !hasKey || !hasValue {
		return fmt.Errorf("%w: user info without key or value", ErrMalformed)
	}
	m.UserInfos = append(m.UserInfos, UserInfo{Key: internString(key), Value: internString(value)})
	return nil
}
