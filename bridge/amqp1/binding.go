package amqp1

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	amqp "github.com/Azure/go-amqp"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// Kind is the broker kind of AMQP 1.0 bridges, the <kind> of a fallback
// event's source.
const Kind = "amqp"

// ExtAddress is the extension every event read carries: the address
// (queue or topic) the message was read from.
const ExtAddress = "amqpaddress"

// extPartitionKey is the CloudEvents partitioning extension, which the
// JMS flavour carries as the message's group id too.
const extPartitionKey = "partitionkey"

// Property prefixes of the AMQP binding: the JMS flavour writes "_"
// (JMS selectors cannot name ":"); both are read.
const (
	// PropPrefix is the prefix of the application properties the bridge
	// writes.
	PropPrefix = "cloudEvents_"
	// altPropPrefix is the binding's other separator.
	altPropPrefix = "cloudEvents:"
)

// Encode returns the AMQP 1.0 message of e in format f. Binary, the JMS
// flavour: every attribute is an application property
// cloudEvents_<name>, datacontenttype included (JMS clients and selectors
// read it there), which is the content-type property too; the data is one
// data section (a JMS bytes message); partitionkey is the group id too.
// Structured, raw and frame write the body as package bridge says, with
// the format's content type. The message is durable and its message id is
// the event's id. e is checked with Validate first.
func Encode(f bridge.Format, e *cloudevent.Event) (*amqp.Message, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	id := e.ID
	m := &amqp.Message{Header: &amqp.MessageHeader{Durable: true}, Properties: &amqp.MessageProperties{MessageID: id}}
	var body []byte
	var ct string
	if f == bridge.FormatBinary {
		all := e.Attrs()
		m.ApplicationProperties = make(map[string]any, len(all))
		for _, a := range all {
			m.ApplicationProperties[PropPrefix+a.Name] = a.Value
		}
		body, ct = e.Data, e.DataContentType
		if pk := e.Extensions[extPartitionKey]; pk != "" {
			m.Properties.GroupID = &pk
		}
	} else {
		var err error
		if body, err = bridge.EncodeValue(f, e); err != nil {
			return nil, err
		}
		ct = bridge.ContentType(f, e)
	}
	if ct != "" {
		m.Properties.ContentType = &ct
	}
	m.Data = [][]byte{body}
	return m, nil
}

// Decode reads the event of message m, read from address, in format f;
// position names an attribute-less message without a message id, and at
// is when it arrived. In binary format a message whose content type is
// application/cloudevents… is a structured event; one with an application
// property cloudEvents_specversion (or cloudEvents:specversion) a binary
// one, whose datacontenttype is the property's or else the content type;
// any other is attribute-less (bridge.Fallback: id the message id, else
// position; time the creation time, else at). The body is the data
// sections, or an AMQP value that is a string or binary. Every event read
// carries amqpaddress.
func Decode(m *amqp.Message, address string, f bridge.Format, position string, at time.Time) (*cloudevent.Event, error) {
	e, err := decode(m, address, f, position, at)
	if err != nil {
		return nil, err
	}
	bridge.SetBrokerExt(e, ExtAddress, address)
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// decode is Decode without the broker extension.
func decode(m *amqp.Message, address string, f bridge.Format, position string, at time.Time) (*cloudevent.Event, error) {
	body, err := Body(m)
	if err != nil {
		return nil, err
	}
	var ct string
	if m.Properties != nil && m.Properties.ContentType != nil {
		ct = *m.Properties.ContentType
	}
	fallback := func(data []byte) *cloudevent.Event {
		id, t := MessageID(m), at
		if id == "" {
			id = position
		}
		if m.Properties != nil && m.Properties.CreationTime != nil && !m.Properties.CreationTime.IsZero() {
			t = *m.Properties.CreationTime
		}
		return bridge.Fallback(Kind, strings.TrimPrefix(address, "/"), id, t, ct, data)
	}
	if f != bridge.FormatBinary {
		return bridge.DecodeValue(f, body, fallback)
	}
	if isStructuredType(ct) {
		return cloudevent.Unmarshal(body)
	}
	props, err := attrProps(m.ApplicationProperties)
	if err != nil {
		return nil, err
	}
	e, ok, err := bridge.FromBinary(props, PropPrefix, ct, body)
	if ok || err != nil {
		return e, err
	}
	return fallback(body), nil
}

// Body returns the payload of m: its data sections joined, or its AMQP
// value when that is a string or binary; no body is empty. Other bodies
// (sequences, other values) are no event data.
func Body(m *amqp.Message) ([]byte, error) {
	switch {
	case len(m.Data) == 1:
		return m.Data[0], nil
	case len(m.Data) > 1:
		return bytes.Join(m.Data, nil), nil
	case m.Value != nil:
		switch v := m.Value.(type) {
		case string:
			return []byte(v), nil
		case []byte:
			return v, nil
		}
		return nil, fmt.Errorf("%w: an AMQP value body of type %T", cloudevent.ErrBadValue, m.Value)
	case len(m.Sequence) > 0:
		return nil, fmt.Errorf("%w: an AMQP sequence body", cloudevent.ErrBadValue)
	}
	return nil, nil
}

// MessageID returns m's message id as a string ("" when it has none):
// AMQP allows strings, unsigned longs, UUIDs and binary.
func MessageID(m *amqp.Message) string {
	if m.Properties == nil || m.Properties.MessageID == nil {
		return ""
	}
	switch v := m.Properties.MessageID.(type) {
	case string:
		return v
	case uint64:
		return strconv.FormatUint(v, 10)
	case amqp.UUID:
		return v.String()
	case []byte:
		return fmt.Sprintf("%x", v)
	}
	return ""
}

// attrProps returns the attribute properties of props, each under
// PropPrefix whichever separator it was written with, their values in
// canonical string form. Other properties are ignored.
func attrProps(props map[string]any) ([]cloudevent.Attr, error) {
	return bridge.MapAttrs(props, PropPrefix, altPropPrefix, maxProperties, "property", "application properties", propString)
}

// propString returns a property value in CloudEvents canonical string
// form: strings as they are, booleans and integers as CloudEvents writes
// them, timestamps in RFC 3339; other types are no attribute value.
func propString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64, int, uint:
		return fmt.Sprint(v), nil
	case time.Time:
		return cloudevent.FormatTime(v), nil
	}
	return "", fmt.Errorf("%w: property of type %T", cloudevent.ErrBadValue, v)
}

// isStructuredType reports whether content type ct announces a structured
// CloudEvent (application/cloudevents, with any suffix and parameters).
func isStructuredType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/cloudevents" || strings.HasPrefix(mt, "application/cloudevents+")
}
