package pulsar

import (
	"fmt"
	"strings"
	"time"

	ps "github.com/apache/pulsar-client-go/pulsar"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// Kind is the broker kind of Pulsar bridges, the <kind> of a fallback
// event's source.
const Kind = "pulsar"

// Extension names every event read from Pulsar carries.
const (
	// ExtTopic is the topic the message was read from.
	ExtTopic = "pulsartopic"
	// ExtMessageID is the message's id in its string form.
	ExtMessageID = "pulsarmessageid"
)

// Property names of the binding.
const (
	// PropPrefix is the prefix of the attribute properties.
	PropPrefix = "ce_"
	// PropContentType is the property holding datacontenttype.
	PropContentType = "content-type"
	// extPartitionKey is the CloudEvents partitioning extension: the
	// message key.
	extPartitionKey = "partitionkey"
)

// Encode returns the Pulsar message of e in format f. Binary: every
// attribute but datacontenttype is a property ce_<name>, datacontenttype
// the property content-type, the data the payload; structured, raw and
// frame write the payload as package bridge says, with the format's
// content type in content-type. partitionkey is the message key in every
// format. e is checked with Validate first.
func Encode(f bridge.Format, e *cloudevent.Event) (*ps.ProducerMessage, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	m := &ps.ProducerMessage{Key: e.Extensions[extPartitionKey], Properties: map[string]string{}}
	var ct string
	if f == bridge.FormatBinary {
		var attrs []cloudevent.Attr
		attrs, ct = bridge.BinaryAttrs(e, PropPrefix)
		for _, a := range attrs {
			m.Properties[a.Name] = a.Value
		}
		m.Payload = e.Data
	} else {
		var err error
		if m.Payload, err = bridge.EncodeValue(f, e); err != nil {
			return nil, err
		}
		ct = bridge.ContentType(f, e)
	}
	if ct != "" {
		m.Properties[PropContentType] = ct
	}
	return m, nil
}

// Delivery is what Decode reads of a Pulsar message.
type Delivery struct {
	// Topic is the topic the message was read from.
	Topic string
	// MessageID is the message id in its string form.
	MessageID string
	// Key is the message key.
	Key string
	// Properties are the message properties.
	Properties map[string]string
	// PublishTime is when the broker stored the message.
	PublishTime time.Time
	// Payload is the message payload.
	Payload []byte
}

// deliveryOf returns the Delivery of a consumed message.
func deliveryOf(m ps.Message) Delivery {
	return Delivery{Topic: m.Topic(), MessageID: m.ID().String(), Key: m.Key(), Properties: m.Properties(),
		PublishTime: m.PublishTime(), Payload: m.Payload()}
}

// Decode reads the event of message d in format f. In binary format a
// message whose content-type property is application/cloudevents… is a
// structured event, one with a property ce_specversion a binary one,
// any other attribute-less: bridge.Fallback's event with the message id
// as id, source /pulsar/<topic>, the publish time, else at. Every event
// read carries pulsartopic and pulsarmessageid.
func Decode(d *Delivery, f bridge.Format, at time.Time) (*cloudevent.Event, error) {
	e, err := decode(d, f, at)
	if err != nil {
		return nil, err
	}
	bridge.SetBrokerExt(e, ExtTopic, d.Topic)
	bridge.SetBrokerExt(e, ExtMessageID, d.MessageID)
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// decode is Decode without the broker extensions.
func decode(d *Delivery, f bridge.Format, at time.Time) (*cloudevent.Event, error) {
	ct := d.Properties[PropContentType]
	fallback := func(data []byte) *cloudevent.Event {
		t := d.PublishTime
		if t.IsZero() {
			t = at
		}
		return bridge.Fallback(Kind, topicPath(d.Topic), d.MessageID, t, ct, data)
	}
	if f != bridge.FormatBinary {
		return bridge.DecodeValue(f, d.Payload, fallback)
	}
	if isStructuredType(ct) {
		return cloudevent.Unmarshal(d.Payload)
	}
	if len(d.Properties) > maxProperties {
		return nil, fmt.Errorf("%w: %d properties, at most %d", cloudevent.ErrTooManyAttributes, len(d.Properties), maxProperties)
	}
	props := make([]cloudevent.Attr, 0, len(d.Properties))
	for k, v := range d.Properties {
		props = append(props, cloudevent.Attr{Name: k, Value: v})
	}
	e, ok, err := bridge.FromBinary(props, PropPrefix, ct, d.Payload)
	if ok || err != nil {
		return e, err
	}
	return fallback(d.Payload), nil
}

// topicPath returns the path part of a topic name
// (persistent://tenant/ns/topic → tenant/ns/topic), the <topic> of a
// fallback source.
func topicPath(topic string) string {
	if _, rest, ok := strings.Cut(topic, "://"); ok {
		return rest
	}
	return topic
}

// isStructuredType reports whether content type ct announces a structured
// CloudEvent (application/cloudevents, with any suffix and parameters).
func isStructuredType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/cloudevents" || strings.HasPrefix(mt, "application/cloudevents+")
}
