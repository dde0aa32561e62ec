package cloudevent

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Unmarshal decodes one event in the CloudEvents JSON format and checks it
// with Validate. Input longer than MaxEventJSONBytes is refused unread.
func Unmarshal(b []byte) (*Event, error) {
	if len(b) > MaxEventJSONBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(b), MaxEventJSONBytes)
	}
	dec := newDecoder(b)
	e, err := decodeEvent(dec)
	if err != nil {
		return nil, err
	}
	if err := expectEOF(dec); err != nil {
		return nil, err
	}
	return e, nil
}

// UnmarshalBatch decodes a JSON batch (an array of events) and checks each
// event with Validate. Input longer than MaxBatchBytes or with more than
// MaxBatchEvents events is refused.
func UnmarshalBatch(b []byte) ([]*Event, error) {
	if len(b) > MaxBatchBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(b), MaxBatchBytes)
	}
	dec := newDecoder(b)
	if err := expectDelim(dec, '['); err != nil {
		return nil, err
	}
	var events []*Event
	for dec.More() {
		if len(events) == MaxBatchEvents {
			return nil, fmt.Errorf("%w: more than %d", ErrBatchTooLong, MaxBatchEvents)
		}
		e, err := decodeEvent(dec)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", len(events), err)
		}
		events = append(events, e)
	}
	if err := expectDelim(dec, ']'); err != nil {
		return nil, err
	}
	if err := expectEOF(dec); err != nil {
		return nil, err
	}
	return events, nil
}

// newDecoder returns a JSON decoder over b that keeps numbers as text.
func newDecoder(b []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec
}

// decodeEvent decodes the next JSON object of dec as an event.
func decodeEvent(dec *json.Decoder) (*Event, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	e := &Event{}
	var (
		seen               = make(map[string]bool)
		specVersion        bool
		data, data64       json.RawMessage
		hasData, hasData64 bool
	)
	for dec.More() {
		name, raw, err := nextMember(dec, seen)
		if err != nil {
			return nil, err
		}
		switch name {
		case "data":
			data, hasData = raw, !isNull(raw)
			continue
		case "data_base64":
			data64, hasData64 = raw, !isNull(raw)
			continue
		}
		if isNull(raw) {
			continue // a null attribute is an absent one
		}
		v, err := attrValue(name, raw)
		if err != nil {
			return nil, err
		}
		if name == AttrSpecVersion {
			specVersion = true
		}
		if err := e.SetAttr(name, v); err != nil {
			return nil, err
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	if !specVersion {
		return nil, fmt.Errorf("%w: absent", ErrSpecVersion)
	}
	if hasData && hasData64 {
		return nil, fmt.Errorf("%w: both data and data_base64", ErrJSON)
	}
	if err := e.setData(data, hasData, data64, hasData64); err != nil {
		return nil, err
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// nextMember reads the next member of an object: its name, checked
// against seen for duplicates, and its raw value.
func nextMember(dec *json.Decoder, seen map[string]bool) (string, json.RawMessage, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", nil, jsonErr(err)
	}
	name, ok := tok.(string)
	if !ok {
		return "", nil, fmt.Errorf("%w: member name expected", ErrJSON)
	}
	if seen[name] {
		return "", nil, fmt.Errorf("%w: duplicate member %q", ErrJSON, truncate(name))
	}
	if len(seen) >= MaxAttributes+2 {
		return "", nil, fmt.Errorf("%w: more than %d members", ErrTooManyAttributes, MaxAttributes+2)
	}
	seen[name] = true
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return "", nil, jsonErr(err)
	}
	return name, raw, nil
}

// attrValue returns the canonical string form of attribute name's JSON
// value: context attributes are strings; extensions strings, booleans or
// 32-bit integers.
func attrValue(name string, raw json.RawMessage) (string, error) {
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", jsonErr(err)
		}
		if s == "" && isContextName(name) {
			return "", fmt.Errorf("%w: %s", ErrEmptyValue, name)
		}
		return s, nil
	case 't', 'f':
		if !isContextName(name) {
			return string(raw), nil
		}
	case '{', '[':
	default:
		if !isContextName(name) {
			n, err := strconv.ParseInt(string(raw), 10, 32)
			if err != nil {
				return "", fmt.Errorf("%w: %s is not a 32-bit integer", ErrBadValue, name)
			}
			return strconv.FormatInt(n, 10), nil
		}
	}
	if err := ValidName(name); err != nil && !isContextName(name) {
		return "", err
	}
	return "", fmt.Errorf("%w: %s has a value of the wrong JSON type", ErrJSON, name)
}

// setData sets e.Data from the data or data_base64 member.
func (e *Event) setData(data json.RawMessage, hasData bool, data64 json.RawMessage, hasData64 bool) error {
	switch {
	case hasData64:
		var s string
		if err := json.Unmarshal(data64, &s); err != nil {
			return fmt.Errorf("%w: data_base64 is not a string", ErrJSON)
		}
		if base64.StdEncoding.DecodedLen(len(s)) > MaxDataBytes+2 {
			return fmt.Errorf("%w: data_base64 of %d characters", ErrDataTooLarge, len(s))
		}
		d, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return fmt.Errorf("%w: data_base64: %w", ErrJSON, err)
		}
		e.Data = d
	case hasData && data[0] == '"' && !isJSONType(e.DataContentType):
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return jsonErr(err)
		}
		e.Data = []byte(s)
	case hasData:
		e.Data = bytes.Clone(data)
	}
	return nil
}

// isNull reports whether raw is the JSON null.
func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// expectDelim reads the next token of dec and checks it is d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return jsonErr(err)
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return fmt.Errorf("%w: %q expected", ErrJSON, d)
	}
	return nil
}

// expectEOF checks nothing but white space follows in dec.
func expectEOF(dec *json.Decoder) error {
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: data after the end", ErrJSON)
	}
	return nil
}

// jsonErr wraps an error of encoding/json in ErrJSON.
func jsonErr(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: %w", ErrJSON, err)
}
