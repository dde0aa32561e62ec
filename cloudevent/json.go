package cloudevent

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/rsbd/rsbd/notification"
)

// Marshal returns e in the CloudEvents JSON format after checking it with
// Validate.
func Marshal(e *Event) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return appendEvent(make([]byte, 0, jsonSize(e)), e), nil
}

// MarshalBatch returns events as a JSON batch (BatchMediaType), checking
// each with Validate.
func MarshalBatch(events []*Event) ([]byte, error) {
	n := 2
	for _, e := range events {
		if err := e.Validate(); err != nil {
			return nil, err
		}
		n += jsonSize(e) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, e := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEvent(b, e)
	}
	return append(b, ']'), nil
}

// jsonSize estimates the JSON size of e, for one allocation in the common
// case.
func jsonSize(e *Event) int {
	n := 64 + base64.StdEncoding.EncodedLen(len(e.Data))
	for _, a := range e.Attrs() {
		n += len(a.Name) + len(a.Value) + 6
	}
	return n
}

// appendEvent appends the JSON object of the valid event e: its attributes
// as strings in the order of Attrs, then its data.
func appendEvent(b []byte, e *Event) []byte {
	b = append(b, '{')
	for i, a := range e.Attrs() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, a.Name)
		b = append(b, ':')
		b = appendString(b, a.Value)
	}
	if len(e.Data) > 0 {
		b = appendData(b, e.DataContentType, e.Data)
	}
	return append(b, '}')
}

// appendData appends the data member: a JSON value as it is, text as a
// string, anything else in base64.
func appendData(b []byte, ct string, data []byte) []byte {
	switch {
	case isJSONType(ct) && isBareJSON(data):
		b = append(b, `,"data":`...)
		return append(b, data...)
	case isTextType(ct) && utf8.Valid(data):
		b = append(b, `,"data":`...)
		return appendString(b, string(data))
	}
	b = append(b, `,"data_base64":"`...)
	b = base64.StdEncoding.AppendEncode(b, data)
	return append(b, '"')
}

// isBareJSON reports whether data is one JSON value without white space
// around it, so that embedding it and decoding it gives the same bytes.
func isBareJSON(data []byte) bool {
	if len(data) == 0 || isSpace(data[0]) || isSpace(data[len(data)-1]) {
		return false
	}
	return json.Valid(data)
}

// isSpace reports whether c is JSON white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// appendString appends s, valid UTF-8, as a JSON string in pure ASCII:
// every byte outside printable ASCII is escaped, so the output is a valid
// CloudEvents string and HTTP header value as well.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r >= 0x20 && r < 0x7f:
			b = append(b, byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r < 0x10000:
			b = append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		default:
			r -= 0x10000
			hi, lo := 0xd800+(r>>10), 0xdc00+(r&0x3ff)
			b = append(b, '\\', 'u', hex[hi>>12&0xf], hex[hi>>8&0xf], hex[hi>>4&0xf], hex[hi&0xf])
			b = append(b, '\\', 'u', hex[lo>>12&0xf], hex[lo>>8&0xf], hex[lo>>4&0xf], hex[lo&0xf])
		}
	}
	return append(b, '"')
}

// appendInfos appends user infos as the JSON array of rsbuserinfos.
func appendInfos(b []byte, infos []notification.UserInfo) []byte {
	b = append(b, '[')
	for i, u := range infos {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendString(b, u.Key)
		b = append(b, ',')
		b = appendString(b, u.Value)
		b = append(b, ']')
	}
	return append(b, ']')
}

// appendTimes appends user times as the JSON array of rsbusertimes.
func appendTimes(b []byte, times []notification.UserTime) []byte {
	b = append(b, '[')
	for i, t := range times {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendString(b, t.Key)
		b = append(b, ',')
		b = strconv.AppendUint(b, t.Time, 10)
		b = append(b, ']')
	}
	return append(b, ']')
}
