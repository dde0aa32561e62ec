package amqp091

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// Kind is the broker kind of RabbitMQ bridges, the <kind> of a fallback
// event's source.
const Kind = "rabbitmq"

// Extension names every event read from RabbitMQ carries.
const (
	// ExtRoutingKey is the routing key the message was published with.
	ExtRoutingKey = "rabbitmqroutingkey"
	// ExtRedelivered is "true" when the broker delivered the message
	// before (it was not acknowledged), else "false".
	ExtRedelivered = "rabbitmqredelivered"
)

// Header prefixes of the AMQP binding: the JMS-friendly "_" form is
// accepted on input too, as the binding asks of consumers.
const (
	// HeaderPrefix is the prefix of the attribute headers the bridge
	// writes.
	HeaderPrefix = "cloudEvents:"
	// altHeaderPrefix is the binding's other separator.
	altHeaderPrefix = "cloudEvents_"
)

// Encode returns the AMQP 0.9.1 message of e in format f. Binary puts
// every attribute but datacontenttype in an application header named
// cloudEvents:<name>, datacontenttype in the content-type property and the
// data in the body; structured, raw and frame write the body as package
// bridge says, with the format's content type. The message is persistent
// and its message id is the event's id. e is checked with Validate first.
func Encode(f bridge.Format, e *cloudevent.Event) (amqp.Publishing, error) {
	if err := e.Validate(); err != nil {
		return amqp.Publishing{}, err
	}
	p := amqp.Publishing{DeliveryMode: amqp.Persistent, MessageId: e.ID}
	if f == bridge.FormatBinary {
		attrs, ct := bridge.BinaryAttrs(e, HeaderPrefix)
		p.Headers = make(amqp.Table, len(attrs))
		for _, a := range attrs {
			p.Headers[a.Name] = a.Value
		}
		p.ContentType, p.Body = ct, e.Data
		return p, nil
	}
	body, err := bridge.EncodeValue(f, e)
	if err != nil {
		return amqp.Publishing{}, err
	}
	p.ContentType, p.Body = bridge.ContentType(f, e), body
	return p, nil
}

// Delivery is what Decode reads of a RabbitMQ delivery.
type Delivery struct {
	// Queue is the queue the message was consumed from.
	Queue string
	// RoutingKey is the routing key it was published with.
	RoutingKey string
	// Redelivered says the broker delivered it before.
	Redelivered bool
	// MessageID is the message-id property.
	MessageID string
	// Timestamp is the timestamp property (zero when absent).
	Timestamp time.Time
	// ContentType is the content-type property.
	ContentType string
	// Headers are the application headers.
	Headers amqp.Table
	// Body is the message body.
	Body []byte
}

// Decode reads the event of delivery d in format f; position names an
// attribute-less message when it has no message id, and at is when it
// arrived. In binary format a delivery whose content type is
// application/cloudevents… is a structured event, one with a header
// cloudEvents:specversion (or cloudEvents_specversion) a binary one, any
// other an attribute-less message (bridge.Fallback: id the message id,
// else position; time the timestamp property, else at). Every event
// read carries rabbitmqroutingkey and rabbitmqredelivered.
func Decode(d *Delivery, f bridge.Format, position string, at time.Time) (*cloudevent.Event, error) {
	e, err := decode(d, f, position, at)
	if err != nil {
		return nil, err
	}
	bridge.SetBrokerExt(e, ExtRoutingKey, d.RoutingKey)
	bridge.SetBrokerExt(e, ExtRedelivered, strconv.FormatBool(d.Redelivered))
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// decode is Decode without the broker extensions.
func decode(d *Delivery, f bridge.Format, position string, at time.Time) (*cloudevent.Event, error) {
	fallback := func(data []byte) *cloudevent.Event {
		id, t := d.MessageID, d.Timestamp
		if id == "" {
			id = position
		}
		if t.IsZero() {
			t = at
		}
		return bridge.Fallback(Kind, d.Queue, id, t, d.ContentType, data)
	}
	if f != bridge.FormatBinary {
		return bridge.DecodeValue(f, d.Body, fallback)
	}
	if isStructuredType(d.ContentType) {
		return cloudevent.Unmarshal(d.Body)
	}
	headers, err := attrHeaders(d.Headers)
	if err != nil {
		return nil, err
	}
	e, ok, err := bridge.FromBinary(headers, HeaderPrefix, d.ContentType, d.Body)
	if ok || err != nil {
		return e, err
	}
	return fallback(d.Body), nil
}

// attrHeaders returns the attribute headers of t, each under HeaderPrefix
// whichever separator it was written with, and their values in canonical
// string form. Headers of other names are ignored.
func attrHeaders(t amqp.Table) ([]cloudevent.Attr, error) {
	return bridge.MapAttrs(t, HeaderPrefix, altHeaderPrefix, maxHeaders, "header", "headers", headerString)
}

// headerString returns a header value in CloudEvents canonical string
// form: strings as they are, booleans and integers as CloudEvents writes
// them, timestamps in RFC 3339; other types are no attribute value.
func headerString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case int8:
		return strconv.FormatInt(int64(v), 10), nil
	case int16:
		return strconv.FormatInt(int64(v), 10), nil
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case byte:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint16:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint32:
		return strconv.FormatUint(uint64(v), 10), nil
	case time.Time:
		return cloudevent.FormatTime(v), nil
	}
	return "", fmt.Errorf("%w: header of type %T", cloudevent.ErrBadValue, v)
}

// isStructuredType reports whether content type ct announces a structured
// CloudEvent (application/cloudevents, with any suffix and parameters).
func isStructuredType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/cloudevents" || strings.HasPrefix(mt, "application/cloudevents+")
}
