package kafka

import (
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// Names of the binding.
const (
	kind          = "kafka"
	headerPrefix  = "ce_"
	headerContent = "content-type"
	extPartKey    = "partitionkey"
)

// encode returns the record of e on topic in format f.
func encode(f bridge.Format, topic string, e *cloudevent.Event) (*kgo.Record, error) {
	r := &kgo.Record{Topic: topic}
	if k := e.Extensions[extPartKey]; k != "" {
		r.Key = []byte(k)
	} else if e.Subject != "" {
		r.Key = []byte(e.Subject)
	}
	switch f {
	case bridge.FormatBinary:
		attrs, ct := bridge.BinaryAttrs(e, headerPrefix)
		r.Headers = make([]kgo.RecordHeader, 0, len(attrs)+1)
		for _, a := range attrs {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: a.Name, Value: []byte(a.Value)})
		}
		if ct != "" {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: headerContent, Value: []byte(ct)})
		}
		r.Value = e.Data
		return r, e.Validate()
	case bridge.FormatStructured:
		r.Headers = []kgo.RecordHeader{{Key: headerContent, Value: []byte(cloudevent.MediaType)}}
	}
	v, err := bridge.EncodeValue(f, e)
	r.Value = v
	return r, err
}

// decode returns the Message of a record read in format f.
func decode(f bridge.Format, r *kgo.Record) bridge.Message {
	pos := r.Topic + "-" + strconv.FormatInt(int64(r.Partition), 10) + "-" + strconv.FormatInt(r.Offset, 10)
	var ct string
	attrs := make([]cloudevent.Attr, 0, len(r.Headers))
	for _, h := range r.Headers {
		if strings.EqualFold(h.Key, headerContent) {
			ct = string(h.Value)
		}
		attrs = append(attrs, cloudevent.Attr{Name: h.Key, Value: string(h.Value)})
	}
	fallback := func(v []byte) *cloudevent.Event {
		e := bridge.Fallback(kind, r.Topic, pos, r.Timestamp, ct, v)
		if len(r.Key) > 0 {
			bridge.SetBrokerExt(e, extPartKey, string(r.Key))
		}
		return e
	}
	var e *cloudevent.Event
	var err error
	switch {
	case f != bridge.FormatRaw && strings.HasPrefix(ct, cloudevent.MediaType):
		e, err = cloudevent.Unmarshal(r.Value)
	case f == bridge.FormatBinary:
		var ok bool
		if e, ok, err = bridge.FromBinary(attrs, headerPrefix, ct, r.Value); !ok && err == nil {
			e = fallback(r.Value)
			err = e.Validate()
		}
	default:
		e, err = bridge.DecodeValue(f, r.Value, fallback)
	}
	if err == nil {
		bridge.SetBrokerExt(e, "kafkatopic", r.Topic)
		bridge.SetBrokerExt(e, "kafkapartition", strconv.FormatInt(int64(r.Partition), 10))
		bridge.SetBrokerExt(e, "kafkaoffset", strconv.FormatInt(r.Offset, 10))
		if !r.Timestamp.IsZero() {
			bridge.SetBrokerExt(e, "kafkatimestamp", cloudevent.FormatTime(r.Timestamp))
		}
		err = e.Validate()
	}
	if err != nil {
		return bridge.Message{Reason: bridge.ReasonOf(err), Err: err, Payload: r.Value, Position: pos}
	}
	return bridge.Message{Event: e, Payload: r.Value, Position: pos}
}
