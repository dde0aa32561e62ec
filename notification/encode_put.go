package notification

import "google.golang.org/protobuf/encoding/protowire"

// putter writes a Notification into memory sized for it beforehand
// (NotificationSize): b is exactly as long as the encoding, i is the next
// byte. Writing by index saves an append's capacity check and slice
// update per field, which is a measurable share of a small event's
// encoding (BenchmarkEncode). A write past b panics (the size was not the
// encoding's).
type putter struct {
	b []byte
	i int
}

// uvarint writes v as a base-128 varint.
func (p *putter) uvarint(v uint64) {
	b, i := p.b, p.i // in registers: a write to b might be one to p
	for v >= 0x80 {
		b[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	b[i] = byte(v)
	p.i = i + 1
}

// tag writes the key of field num of wire type typ.
func (p *putter) tag(num protowire.Number, typ protowire.Type) {
	p.uvarint(protowire.EncodeTag(num, typ))
}

// varintField writes field num with varint value v.
func (p *putter) varintField(num protowire.Number, v uint64) {
	p.tag(num, protowire.VarintType)
	p.uvarint(v)
}

// str writes field num with the bytes of s.
func (p *putter) str(num protowire.Number, s string) {
	p.tag(num, protowire.BytesType)
	p.uvarint(uint64(len(s)))
	p.i += copy(p.b[p.i:], s)
}

// raw writes field num with the bytes of b.
func (p *putter) raw(num protowire.Number, b []byte) {
	p.tag(num, protowire.BytesType)
	p.uvarint(uint64(len(b)))
	p.i += copy(p.b[p.i:], b)
}

// notification writes e's fields in field-number order, event_id last.
func (p *putter) notification(e *Event) {
	if !e.Scope.IsZero() {
		p.str(fieldScope, e.Scope.String())
	}
	if e.hasWireSchema() {
		p.str(fieldWireSchema, e.WireSchema)
	}
	if e.hasData() {
		p.raw(fieldData, e.Data)
	}
	for _, c := range e.Causes {
		p.eventID(fieldCauses, c)
	}
	if e.hasMethod() {
		p.str(fieldMethod, e.Method)
	}
	if e.hasMetaData() {
		p.metaData(e)
	}
	p.eventID(fieldEventID, e.ID)
}

// eventID writes id as the EventId field num.
func (p *putter) eventID(num protowire.Number, id EventID) {
	p.tag(num, protowire.BytesType)
	p.uvarint(uint64(eventIDSize(id)))
	p.raw(fieldSenderID, id.SenderID[:])
	p.varintField(fieldSequenceNumber, uint64(id.SequenceNumber))
}

// metaData writes e's MetaData field.
func (p *putter) metaData(e *Event) {
	m := &e.MetaData
	p.tag(fieldMetaData, protowire.BytesType)
	p.uvarint(uint64(metaDataSize(e)))
	p.varintField(fieldCreateTime, uint64(m.CreateTime))
	p.varintField(fieldSendTime, uint64(m.SendTime))
	if e.hasReceiveTime() {
		p.varintField(fieldReceiveTime, uint64(m.ReceiveTime))
	}
	if e.hasDeliverTime() {
		p.varintField(fieldDeliverTime, uint64(m.DeliverTime))
	}
	for _, t := range m.UserTimes {
		p.tag(fieldUserTimes, protowire.BytesType)
		p.uvarint(uint64(userTimeSize(t)))
		p.str(fieldKey, t.Key)
		p.varintField(fieldTimestamp, t.Time)
	}
	for _, u := range m.UserInfos {
		p.tag(fieldUserInfos, protowire.BytesType)
		p.uvarint(uint64(userInfoSize(u)))
		p.str(fieldKey, u.Key)
		p.str(fieldValue, u.Value)
	}
}
