package mqtt

import (
	"bytes"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// Kind is the broker kind of MQTT bridges, the <kind> of a fallback
// event's source.
const Kind = "mqtt"

// Extension names every event read from MQTT carries.
const (
	// ExtTopic is the topic the message was published on.
	ExtTopic = "mqtttopic"
	// ExtQoS is the QoS the message was delivered with (0, 1 or 2).
	ExtQoS = "mqttqos"
	// ExtRetained is "true" on an event read from a retained message.
	ExtRetained = "mqttretained"
)

// UserProperty is an MQTT 5 user property: a UTF-8 string pair. Names may
// repeat.
type UserProperty struct {
	Key, Value string
}

// Message is an MQTT application message as a PUBLISH packet carries it.
// ContentType and User exist only in MQTT 5; an MQTT 3.1.1 message has
// neither.
type Message struct {
	// Topic is the topic name.
	Topic string
	// QoS is the delivery QoS, 0 to 2.
	QoS byte
	// Retain is the retain flag.
	Retain bool
	// ContentType is the MQTT 5 Content Type property.
	ContentType string
	// User are the MQTT 5 user properties in wire order.
	User []UserProperty
	// Payload is the application payload.
	Payload []byte
}

// Encode fills m's content type, user properties and payload with e in
// format f. Binary (MQTT 5 only) puts datacontenttype in the Content Type
// and every other attribute in a user property named as the attribute,
// without prefix, specversion included; the data is the payload.
// Structured, raw and frame write the payload as package bridge says, with
// the format's content type when the message is MQTT 5 (v5). e is checked
// with Validate first.
func Encode(m *Message, f bridge.Format, e *cloudevent.Event, v5 bool) error {
	if err := e.Validate(); err != nil {
		return err
	}
	m.User = nil
	if f == bridge.FormatBinary {
		attrs, ct := bridge.BinaryAttrs(e, "")
		m.User = make([]UserProperty, len(attrs))
		for i, a := range attrs {
			m.User[i] = UserProperty{a.Name, a.Value}
		}
		m.ContentType, m.Payload = ct, e.Data
		return nil
	}
	payload, err := bridge.EncodeValue(f, e)
	if err != nil {
		return err
	}
	m.Payload, m.ContentType = payload, ""
	if v5 {
		m.ContentType = bridge.ContentType(f, e)
	}
	return nil
}

// Decode reads the event of message m in format f. id is the message's
// position (MQTT has no message id: the receiver numbers the messages it
// reads) and at when it arrived; they name an attribute-less message,
// which is read as bridge.Fallback's event:
//
//   - binary: an MQTT 5 message whose Content Type is
//     application/cloudevents… is a structured event; one with a user
//     property specversion a binary one; any other has no attributes;
//   - structured: a payload that is a JSON object naming "specversion" is
//     CloudEvents JSON (and a dead letter when it is not valid); any other
//     payload has no attributes, as a plain producer writes it;
//   - raw: the payload alone, always attribute-less;
//   - frame: an EventMeshFrame, or CloudEvents JSON.
//
// Every event read carries the extensions mqtttopic and mqttqos, and
// mqttretained when the message was retained. Errors wrap package
// cloudevent's or mesh/frame's sentinels, which bridge.ReasonOf names.
func Decode(m *Message, f bridge.Format, id string, at time.Time) (*cloudevent.Event, error) {
	e, err := decode(m, f, id, at)
	if err != nil {
		return nil, err
	}
	bridge.SetBrokerExt(e, ExtTopic, m.Topic)
	bridge.SetBrokerExt(e, ExtQoS, strconv.Itoa(int(m.QoS)))
	if m.Retain {
		bridge.SetBrokerExt(e, ExtRetained, "true")
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// decode is Decode without the broker extensions.
func decode(m *Message, f bridge.Format, id string, at time.Time) (*cloudevent.Event, error) {
	fallback := func(data []byte) *cloudevent.Event {
		return bridge.Fallback(Kind, escapeTopic(m.Topic), id, at, m.ContentType, data)
	}
	switch f {
	case bridge.FormatBinary:
		if isStructuredType(m.ContentType) {
			return cloudevent.Unmarshal(m.Payload)
		}
		if len(m.User) > maxUserProperties {
			return nil, fmt.Errorf("%w: %d user properties, at most %d", cloudevent.ErrTooManyAttributes, len(m.User), maxUserProperties)
		}
		headers := make([]cloudevent.Attr, len(m.User))
		for i, p := range m.User {
			headers[i] = cloudevent.Attr{Name: p.Key, Value: p.Value}
		}
		e, ok, err := bridge.FromBinary(headers, "", m.ContentType, m.Payload)
		if ok || err != nil {
			return e, err
		}
		return fallback(m.Payload), nil
	case bridge.FormatStructured:
		if !LooksStructured(m.Payload) {
			return fallback(m.Payload), nil
		}
	}
	return bridge.DecodeValue(f, m.Payload, fallback)
}

// LooksStructured reports whether payload is meant as a structured
// CloudEvent: it starts, after white space, with '{' and names the member
// "specversion". A payload that does and does not decode is malformed; one
// that does not is an attribute-less message.
func LooksStructured(payload []byte) bool {
	p := bytes.TrimLeft(payload, " \t\r\n")
	return len(p) > 0 && p[0] == '{' && bytes.Contains(p, []byte(`"specversion"`))
}

// escapeTopic percent-encodes each level of topic, so that a fallback
// event's source /mqtt/<topic> is a URI reference whatever characters the
// topic has.
func escapeTopic(topic string) string {
	levels := strings.Split(topic, "/")
	for i, l := range levels {
		levels[i] = url.PathEscape(l)
	}
	return strings.Join(levels, "/")
}

// isStructuredType reports whether content type ct announces a structured
// CloudEvent (application/cloudevents, with any suffix and parameters).
func isStructuredType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/cloudevents" || strings.HasPrefix(mt, "application/cloudevents+")
}
