package bridge

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rsbd/rsbd/cloudevent"
)

// FallbackType is the type of an event read from a message without
// CloudEvents attributes.
const FallbackType = "com.cloud-apim.event-brokers.message"

// Content types GuessContentType answers.
const (
	ContentJSON  = "application/json"
	ContentText  = "text/plain; charset=utf-8"
	ContentBytes = "application/octet-stream"
)

// Fallback returns the event of a message without CloudEvents attributes:
// id is the broker's position of the message, source /<kind>/<topic>,
// type FallbackType, time the broker's (none when at is zero), the
// datacontenttype contentType or, when that is empty, GuessContentType of
// data. An id or topic that is no CloudEvents string leaves the event
// invalid, which Validate says.
func Fallback(kind, topic, id string, at time.Time, contentType string, data []byte) *cloudevent.Event {
	if contentType == "" {
		contentType = GuessContentType(data)
	}
	e := &cloudevent.Event{
		ID:              id,
		Source:          "/" + kind + "/" + strings.TrimPrefix(topic, "/"),
		Type:            FallbackType,
		DataContentType: contentType,
		Data:            data,
	}
	if !at.IsZero() {
		e.Time = cloudevent.FormatTime(at)
	}
	return e
}

// GuessContentType returns ContentJSON for a JSON value, ContentText for
// other valid UTF-8 without control characters but tab and line breaks,
// and ContentBytes for the rest (and for no data).
func GuessContentType(data []byte) string {
	if len(data) == 0 {
		return ContentBytes
	}
	if json.Valid(data) {
		return ContentJSON
	}
	if !utf8.Valid(data) {
		return ContentBytes
	}
	for _, c := range data {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return ContentBytes
		}
	}
	return ContentText
}

// SetBrokerExt sets the extension name (a broker extension such as
// kafkatopic) to value, overriding what the producer set: the broker's
// word is the truth about where the message was. A name or value that
// breaks the rules is not set.
func SetBrokerExt(e *cloudevent.Event, name, value string) {
	if value == "" || !cloudevent.ValidString(value) || len(value) > cloudevent.MaxValueBytes {
		return
	}
	_ = e.SetExtension(name, value)
}

// BinaryAttrs returns the attributes of e as a binary-mode binding writes
// them: each attribute but datacontenttype under prefix+name
// (specversion first, then the context attributes, then the extensions
// by name), and the content type apart.
func BinaryAttrs(e *cloudevent.Event, prefix string) (attrs []cloudevent.Attr, contentType string) {
	all := e.Attrs()
	attrs = make([]cloudevent.Attr, 0, len(all))
	for _, a := range all {
		if a.Name == cloudevent.AttrDataContentType {
			contentType = a.Value
			continue
		}
		attrs = append(attrs, cloudevent.Attr{Name: prefix + a.Name, Value: a.Value})
	}
	return attrs, contentType
}

// FromBinary reads a binary-mode message: headers whose name starts with
// prefix (compared without case) are attributes, the rest are ignored;
// contentType is the datacontenttype. ok is false when no header names
// specversion: the message has no CloudEvents attributes and the caller
// uses Fallback. The event is checked with Validate.
func FromBinary(headers []cloudevent.Attr, prefix, contentType string, data []byte) (e *cloudevent.Event, ok bool, err error) {
	e = &cloudevent.Event{Data: data}
	for _, h := range headers {
		if len(h.Name) <= len(prefix) || !strings.EqualFold(h.Name[:len(prefix)], prefix) {
			continue
		}
		name := h.Name[len(prefix):]
		if name == cloudevent.AttrSpecVersion {
			ok = true
		}
		if err := e.SetAttr(name, h.Value); err != nil {
			return nil, true, err
		}
	}
	if !ok {
		return nil, false, nil
	}
	if e.DataContentType == "" {
		e.DataContentType = contentType
	}
	if err := e.Validate(); err != nil {
		return nil, true, err
	}
	return e, true, nil
}

// UniqueID returns a fresh random id (32 hex digits), the id of an
// attribute-less message on a broker that numbers no message.
func UniqueID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
