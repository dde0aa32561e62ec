package nats

import (
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// Names of the binding.
const (
	kind          = "nats"
	headerPrefix  = "ce-"
	headerContent = "content-type"
)

// encode returns the message of e on subject in format f.
func encode(f bridge.Format, subject string, e *cloudevent.Event) (*nats.Msg, error) {
	m := nats.NewMsg(subject)
	switch f {
	case bridge.FormatBinary:
		attrs, ct := bridge.BinaryAttrs(e, headerPrefix)
		for _, a := range attrs {
			m.Header.Set(a.Name, a.Value)
		}
		if ct != "" {
			m.Header.Set(headerContent, ct)
		}
		m.Data = e.Data
		return m, e.Validate()
	case bridge.FormatStructured:
		m.Header.Set(headerContent, cloudevent.MediaType)
	}
	v, err := bridge.EncodeValue(f, e)
	m.Data = v
	return m, err
}

// position is where a message lies: its JetStream stream and sequence,
// when it has them, and its time.
type position struct {
	stream string
	seq    uint64
	at     time.Time
}

// id returns the message id of an attribute-less message.
func (p position) id() string {
	if p.stream == "" {
		return nuid.Next()
	}
	return p.stream + "-" + strconv.FormatUint(p.seq, 10)
}

// decode returns the Message of m read in format f.
func decode(f bridge.Format, m *nats.Msg, p position) bridge.Message {
	id := p.id()
	var ct string
	attrs := make([]cloudevent.Attr, 0, len(m.Header))
	for k, vs := range m.Header {
		if len(vs) == 0 {
			continue
		}
		if strings.EqualFold(k, headerContent) {
			ct = vs[0]
		}
		attrs = append(attrs, cloudevent.Attr{Name: k, Value: vs[0]})
	}
	fallback := func(v []byte) *cloudevent.Event { return bridge.Fallback(kind, m.Subject, id, p.at, ct, v) }
	var e *cloudevent.Event
	var err error
	switch {
	case f != bridge.FormatRaw && strings.HasPrefix(ct, cloudevent.MediaType):
		e, err = cloudevent.Unmarshal(m.Data)
	case f == bridge.FormatBinary:
		var ok bool
		if e, ok, err = bridge.FromBinary(attrs, headerPrefix, ct, m.Data); !ok && err == nil {
			e = fallback(m.Data)
			err = e.Validate()
		}
	default:
		e, err = bridge.DecodeValue(f, m.Data, fallback)
	}
	if err == nil {
		bridge.SetBrokerExt(e, "natssubject", m.Subject)
		if p.stream != "" {
			bridge.SetBrokerExt(e, "natsstream", p.stream)
			bridge.SetBrokerExt(e, "natssequence", strconv.FormatUint(p.seq, 10))
		}
		err = e.Validate()
	}
	if err != nil {
		return bridge.Message{Reason: bridge.ReasonOf(err), Err: err, Payload: m.Data, Position: id}
	}
	return bridge.Message{Event: e, Payload: m.Data, Position: id}
}

// streamName returns the JetStream stream of a subject.
func streamName(subject string) string {
	return "RSBD_" + strings.Map(func(r rune) rune {
		switch r {
		case '.', '*', '>', ' ':
			return '_'
		}
		return r
	}, subject)
}
