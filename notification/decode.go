package notification

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// Unmarshal decodes a Notification; it is DecodeNotification.
func Unmarshal(b []byte) (*Event, error) { return DecodeNotification(b) }

// DecodeNotification decodes a serialized Notification into a new Event.
//
// It follows protobuf semantics exactly as the generated code does (unknown
// fields and known fields of an unexpected wire type are skipped, a repeated
// singular scalar keeps its last value, repeated singular messages merge,
// required fields must be set) and then applies the checks of
// FromNotification, so it accepts and rejects the same inputs and returns
// the same events as proto.Unmarshal followed by FromNotification. The Event
// shares no memory with b.
func DecodeNotification(b []byte) (*Event, error) {
	var d notificationDecoder
	if err := d.decode(b); err != nil {
		return nil, err
	}
	if err := d.finish(); err != nil {
		return nil, err
	}
	return d.place(), nil
}

// fieldReader steps through the fields of one protobuf message, like a
// bufio.Scanner: next consumes a field and reports whether there was one;
// after it returns false, err tells a clean end (nil) from malformed input.
// For varint fields x holds the value, for length-delimited fields v holds
// the bytes; other wire types carry nothing and are skipped by every message
// of the RSB protocol.
type fieldReader struct {
	b   []byte
	num protowire.Number
	typ protowire.Type
	x   uint64
	v   []byte
	err error
}

func (r *fieldReader) next() bool {
	b := r.b
	if len(b) == 0 || r.err != nil {
		return false
	}
	var num protowire.Number
	var typ protowire.Type
	var n int
	if c := b[0]; c < 0x80 && c >= 1<<3 { // a one-byte tag of a valid field number
		num, typ, n = protowire.Number(c>>3), protowire.Type(c&7), 1
	} else if num, typ, n = protowire.ConsumeTag(b); n < 0 {
		r.err = malformed(n)
		return false
	}
	if num > protowire.MaxValidNumber {
		r.err = fmt.Errorf("%w: field number %d out of range", ErrMalformed, num)
		return false
	}
	r.num, r.typ = num, typ
	m := r.value(b[n:])
	if m < 0 {
		r.err = malformed(m)
		return false
	}
	r.b = b[n+m:]
	return true
}

// value consumes the value of the current field from b, as protowire does
// (one-byte varints and lengths without a call), and returns its length
// or a negative protowire error code.
func (r *fieldReader) value(b []byte) (m int) {
	switch r.typ {
	case protowire.VarintType:
		if len(b) > 0 && b[0] < 0x80 {
			r.x = uint64(b[0])
			return 1
		}
		r.x, m = protowire.ConsumeVarint(b)
	case protowire.BytesType:
		if len(b) > 0 && b[0] < 0x80 && int(b[0]) < len(b) {
			l := int(b[0])
			r.v = b[1 : 1+l]
			return 1 + l
		}
		r.v, m = protowire.ConsumeBytes(b)
	default:
		m = protowire.ConsumeFieldValue(r.num, r.typ, b)
	}
	return m
}

func malformed(n int) error {
	return fmt.Errorf("%w: %w", ErrMalformed, protowire.ParseError(n))
}

// idDecoder accumulates one EventId, merging repeated occurrences.
type idDecoder struct {
	sender []byte
	seq    uint32
	hasSeq bool
}

func (d *idDecoder) decode(b []byte) error {
	r := fieldReader{b: b}
	for r.next() {
		switch {
		case r.num == fieldSenderID && r.typ == protowire.BytesType:
			d.sender = r.v
		case r.num == fieldSequenceNumber && r.typ == protowire.VarintType:
			d.seq, d.hasSeq = uint32(r.x), true
		}
	}
	return r.err
}

// id checks the accumulated EventId as FromNotification does.
func (d *idDecoder) id() (EventID, error) {
	var id EventID
	if len(d.sender) != len(id.SenderID) {
		return id, fmt.Errorf("%w: %d bytes", ErrBadSenderID, len(d.sender))
	}
	if !d.hasSeq {
		return id, fmt.Errorf("%w: event id without sequence number", ErrMalformed)
	}
	copy(id.SenderID[:], d.sender)
	id.SequenceNumber = d.seq
	return id, nil
}

// notificationDecoder holds the last value of each bytes field (nil when
// absent) until finish converts them, so repeated fields cost no copies.
// It decodes into e, by value so that it stays on the stack; place moves
// the result to the heap.
type notificationDecoder struct {
	e                               Event
	alias                           bool     // Data aliases the input
	scopes                          *Decoder // nil: no scope cache
	scope, method, wireSchema, data []byte
	id                              idDecoder
	hasID                           bool
	meta                            metaDecoder
}

func (d *notificationDecoder) decode(b []byte) error {
	r := fieldReader{b: b}
	for r.next() {
		if r.typ != protowire.BytesType {
			continue // every Notification field is length-delimited
		}
		var err error
		switch r.num {
		case fieldScope:
			d.scope = r.v
		case fieldWireSchema:
			d.wireSchema = r.v
		case fieldData:
			d.data = r.v
		case fieldMethod:
			d.method = r.v
		case fieldCauses:
			err = d.cause(r.v)
		case fieldMetaData:
			err = d.meta.decode(&d.e.MetaData, r.v)
			d.e.Present |= HasMetaData
		case fieldEventID:
			err = d.id.decode(r.v)
			d.hasID = true
		}
		if err != nil {
			return err
		}
	}
	return r.err
}

func (d *notificationDecoder) cause(b []byte) error {
	if len(d.e.Causes) >= MaxCauses {
		return fmt.Errorf("%w: more than %d causes", ErrTooMany, MaxCauses)
	}
	var c idDecoder
	if err := c.decode(b); err != nil {
		return err
	}
	id, err := c.id()
	if err != nil {
		return fmt.Errorf("cause %d: %w", len(d.e.Causes), err)
	}
	d.e.Causes = append(d.e.Causes, id)
	return nil
}

// run decodes b and checks the result, leaving the event to place.
func (d *notificationDecoder) run(b []byte) error {
	if err := d.decode(b); err != nil {
		return err
	}
	return d.finish()
}

// finish checks required fields and fills the Event's strings and payload.
func (d *notificationDecoder) finish() error {
	e := &d.e
	if !d.hasID {
		return ErrMissingEventID
	}
	id, err := d.id.id()
	if err != nil {
		return fmt.Errorf("event id: %w", err)
	}
	e.ID = id
	if err := d.meta.check(e); err != nil {
		return err
	}
	if d.scopes != nil {
		e.Scope, err = d.scopes.scope(d.scope)
	} else {
		e.Scope, err = parseScope(d.scope)
	}
	if err != nil {
		return err
	}
	e.Method, e.WireSchema = internString(d.method), internString(d.wireSchema)
	e.Present |= presentIf(d.method != nil, HasMethod) | presentIf(d.wireSchema != nil, HasWireSchema) |
		presentIf(d.data != nil, HasData)
	return nil
}

// place returns the finished event in a new allocation, with a copy of
// the data or, when aliasing, the input's data itself.
func (d *notificationDecoder) place() *Event {
	e := new(Event)
	d.placeInto(e)
	return e
}

// placeInto stores the decoded event in *e.
func (d *notificationDecoder) placeInto(e *Event) {
	*e = d.e
	switch n := len(d.data); {
	case n == 0:
	case d.alias:
		e.Data = d.data[:n:n]
	default:
		// A separate pointer-free allocation: cheaper than a combined one,
		// and append copies without zeroing first.
		e.Data = bytes.Clone(d.data)
	}
}

// internString converts b to a string without allocating for the wire
// schemas, methods and user info keys and values RSB clients commonly
// send, gRPC over the bus's per-frame ones among them.
func internString(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "utf-8-string":
		return "utf-8-string"
	case "void":
		return "void"
	case ".*":
		return ".*"
	case "bytes":
		return "bytes"
	case ".rsb.protocol.introspection.Hello":
		return ".rsb.protocol.introspection.Hello"
	case ".rsb.protocol.introspection.Bye":
		return ".rsb.protocol.introspection.Bye"
	case "REQUEST":
		return "REQUEST"
	case "REPLY":
		return "REPLY"
	case "SURVEY":
		return "SURVEY"
	case "rsb:error?":
		return "rsb:error?"
	case "rsb.wire-schema":
		return "rsb.wire-schema"
	case "FRAME":
		return "FRAME"
	case "grpc-wire-format":
		return "grpc-wire-format"
	case "proto":
		return "proto"
	case "json":
		return "json"
	}
	return string(b)
}
