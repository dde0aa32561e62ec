package redis

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// Names of the binding.
const (
	kind         = "redis"
	fieldPrefix  = "ce_"
	fieldContent = "content-type"
	fieldData    = "data"
)

// entryFields returns the fields of the stream entry of e in format f,
// in order, as XADD takes them.
func entryFields(f bridge.Format, e *cloudevent.Event) ([]any, error) {
	if f == bridge.FormatBinary {
		attrs, ct := bridge.BinaryAttrs(e, fieldPrefix)
		fields := make([]any, 0, 2*len(attrs)+4)
		for _, a := range attrs {
			fields = append(fields, a.Name, a.Value)
		}
		if ct != "" {
			fields = append(fields, fieldContent, ct)
		}
		return append(fields, fieldData, e.Data), e.Validate()
	}
	v, err := bridge.EncodeValue(f, e)
	if err != nil {
		return nil, err
	}
	if ct := bridge.ContentType(f, e); ct != "" && f != bridge.FormatRaw {
		return []any{fieldContent, ct, fieldData, v}, nil
	}
	return []any{fieldData, v}, nil
}

// entry is a stream entry as a Receiver read it.
type entry struct {
	stream, id  string
	values      map[string]any
	redelivered bool
}

// entryTime returns the time of a stream entry id: its milliseconds part.
func entryTime(id string) time.Time {
	ms, _, _ := strings.Cut(id, "-")
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}
	}
	return time.UnixMilli(n)
}

// decodeEntry returns the Message of a stream entry read in format f.
func decodeEntry(f bridge.Format, en entry) bridge.Message {
	pos := en.stream + "-" + en.id
	var ct string
	var data []byte
	hasData := false
	attrs := make([]cloudevent.Attr, 0, len(en.values))
	fields := make(map[string]string, len(en.values))
	for k, v := range en.values {
		s := fmt.Sprint(v)
		switch {
		case strings.EqualFold(k, fieldContent):
			ct = s
		case k == fieldData:
			data, hasData = []byte(s), true
		}
		fields[k] = s
		attrs = append(attrs, cloudevent.Attr{Name: k, Value: s})
	}
	if !hasData && ct == "" {
		// An entry of plain fields: its data is the fields as a JSON object.
		data, _ = json.Marshal(fields)
	}
	fallback := func(v []byte) *cloudevent.Event {
		return bridge.Fallback(kind, en.stream, pos, entryTime(en.id), ct, v)
	}
	e, err := decodeValue(f, attrs, ct, data, fallback)
	if err == nil {
		bridge.SetBrokerExt(e, "redisstream", en.stream)
		bridge.SetBrokerExt(e, "redisid", en.id)
		bridge.SetBrokerExt(e, "redisredelivered", strconv.FormatBool(en.redelivered))
		err = e.Validate()
	}
	if err != nil {
		return bridge.Message{Reason: bridge.ReasonOf(err), Err: err, Payload: data, Position: pos}
	}
	return bridge.Message{Event: e, Payload: data, Position: pos}
}

// decodeValue reads an entry's or message's event in format f.
func decodeValue(f bridge.Format, attrs []cloudevent.Attr, ct string, data []byte, fallback func([]byte) *cloudevent.Event) (*cloudevent.Event, error) {
	switch {
	case f != bridge.FormatRaw && strings.HasPrefix(ct, cloudevent.MediaType):
		return cloudevent.Unmarshal(data)
	case f == bridge.FormatBinary:
		e, ok, err := bridge.FromBinary(attrs, fieldPrefix, ct, data)
		if !ok && err == nil {
			e = fallback(data)
			err = e.Validate()
		}
		return e, err
	}
	return bridge.DecodeValue(f, data, fallback)
}

// decodeMessage returns the Message of a pub/sub message read in format f.
func decodeMessage(f bridge.Format, channel string, payload []byte, at time.Time) bridge.Message {
	id := bridge.UniqueID()
	fallback := func(v []byte) *cloudevent.Event { return bridge.Fallback(kind, channel, id, at, "", v) }
	e, err := bridge.DecodeValue(f, payload, fallback)
	if err == nil {
		bridge.SetBrokerExt(e, "redischannel", channel)
		err = e.Validate()
	}
	if err != nil {
		return bridge.Message{Reason: bridge.ReasonOf(err), Err: err, Payload: payload, Position: channel + "-" + id}
	}
	return bridge.Message{Event: e, Payload: payload, Position: channel + "-" + id}
}
