package frame

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
	"github.com/rsbd/rsbd/scope"
)

// ErrMalformed reports a frame body that is not a valid Notification: broken
// protobuf wire format, a missing event_id, or a missing or invalid scope.
var ErrMalformed = errors.New("rsbsocket: malformed notification")

// Field numbers of rsb.protocol.Notification and rsb.protocol.EventId.
const (
	fieldScope      protowire.Number = 6
	fieldWireSchema protowire.Number = 7
	fieldData       protowire.Number = 9
	fieldMethod     protowire.Number = 14
	fieldEventID    protowire.Number = 108 // 100 + wire format version 8

	fieldSenderID       protowire.Number = 1
	fieldSequenceNumber protowire.Number = 2
)

// Frame is one Notification as carried by the socket protocol: the raw body
// (relayed byte for byte, never re-encoded) and the fields routing needs,
// parsed cheaply from it.
//
// Body and the byte-slice fields alias the same memory; it is shared by every
// connection the frame is queued to and must not be modified. Frames from
// ParseOwned (a server's) of a small Body share its memory with their
// Scope as well: a holder that keeps a Scope but not its Body should keep
// scope.Clone of it.
type Frame struct {
	// Body is the serialized Notification, without the length header.
	Body []byte
	// Scope is the event's scope (Notification field 6), validated.
	Scope scope.Scope
	// SenderID is event_id.sender_id: the sending participant's UUID.
	SenderID []byte
	// SequenceNumber is event_id.sequence_number.
	SequenceNumber uint32
	// WireSchema is the payload's wire schema (field 7), e.g. "utf-8-string".
	WireSchema []byte
	// Method is the event's method (field 14), e.g. "REQUEST"; empty if unset.
	Method []byte
	// Data is the serialized payload (field 9).
	Data []byte

	// room is the memory Body lies in, with head spare bytes before it and
	// the rest after it (ParseOwned); nil when the frame has none.
	room []byte
	head int
}

// Wrap writes prefix into the spare bytes just before Body and suffix into
// those just after it and returns prefix, Body and suffix as one slice,
// without copying Body. It reports false and writes nothing when the frame
// has too little room: a frame from ParseOwned has the room it was read
// with (a server's Handler gets such frames when the server is configured
// with enough room, unless the body exceeded EagerAllocMax), one from
// ParseFrame has none. The spare bytes are the frame's own, shared with no
// other frame, so its holder may wrap a frame once; Body itself is never
// modified, and the frame's other readers (the connections it is queued
// to) read only Body.
func (f *Frame) Wrap(prefix, suffix []byte) ([]byte, bool) {
	end := f.head + len(f.Body)
	if f.room == nil || len(prefix) > f.head || len(suffix) > len(f.room)-end {
		return nil, false
	}
	start := f.head - len(prefix)
	copy(f.room[start:], prefix)
	copy(f.room[end:], suffix)
	return f.room[start : end+len(suffix) : end+len(suffix)], true
}

// ParseFrame checks the top-level wire structure of a serialized Notification
// and extracts scope, event id, wire schema, method and data without a full
// decode. It requires event_id with both sender_id and sequence_number, and a
// valid scope. Like a protobuf decoder it takes the last occurrence of a
// repeated singular field and skips fields of unexpected wire type; nested
// messages other than event_id (meta_data, causes) are not inspected, so
// Notification may still fail on a frame ParseFrame accepts.
func ParseFrame(body []byte) (Frame, error) { return parseFrame(body, nil, false, nil, 0) }

// ParseOwned is ParseFrame for a body handed over for good, as
// ReadFrameRoom returns it: nobody modifies it any more. When room is not
// nil, body lies in it at head (room[head:head+len(body)]) and the frame
// keeps room for Wrap. A body of at most SharedScopeMax bytes gets a Scope
// in its own memory (no allocation of its own); a larger one a copy, so
// that a kept Scope keeps little alive.
func ParseOwned(body, room []byte, head int) (Frame, error) {
	return parseFrame(body, nil, len(body) <= SharedScopeMax, room, head)
}

// Room is the spare bytes around a frame body: Head before it, Tail after.
type Room struct {
	Head, Tail int
}

// FrameParser parses frames as ParseFrame does, remembering the last few
// scopes it parsed (scope.Cache): frames on a recent scope cost neither a
// scope validation nor an allocation. Its zero value is ready; it is not
// safe for concurrent use.
type FrameParser struct {
	scopes scope.Cache
}

// Parse is ParseFrame with p's scope cache.
func (p *FrameParser) Parse(body []byte) (Frame, error) {
	return parseFrame(body, &p.scopes, false, nil, 0)
}

// parseFrame is ParseFrame, parsing the scope through cache when it is
// set, or else, when shared is true, into a Scope that shares body's memory
// (scope.ParseShared), for a body nobody modifies. A frame parsed without
// error keeps room (with body at head) unless room is nil.
func parseFrame(body []byte, cache *scope.Cache, shared bool, room []byte, head int) (Frame, error) {
	f := Frame{Body: body}
	var rawScope []byte
	var haveScope, haveSender, haveSeq bool
	for b := body; len(b) > 0; {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return Frame{}, malformed("tag", protowire.ParseError(n))
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return Frame{}, malformed("field value", protowire.ParseError(n))
			}
			b = b[n:]
			continue
		}
		v, n := consumeBytes(b)
		if n < 0 {
			return Frame{}, malformed("length-delimited field", protowire.ParseError(n))
		}
		b = b[n:]
		switch num {
		case fieldScope:
			rawScope, haveScope = v, true
		case fieldWireSchema:
			f.WireSchema = v
		case fieldData:
			f.Data = v
		case fieldMethod:
			f.Method = v
		case fieldEventID:
			s, q, err := parseEventID(v, &f)
			if err != nil {
				return Frame{}, err
			}
			haveSender, haveSeq = haveSender || s, haveSeq || q
		}
	}
	if !haveSender || !haveSeq {
		return Frame{}, fmt.Errorf("%w: event_id missing or incomplete", ErrMalformed)
	}
	if !haveScope {
		return Frame{}, fmt.Errorf("%w: no scope", ErrMalformed)
	}
	var sc scope.Scope
	var err error
	switch {
	case cache != nil:
		sc, err = cache.ParseBytes(rawScope)
	case shared:
		sc, err = scope.ParseShared(rawScope)
	default:
		sc, err = scope.Parse(string(rawScope))
	}
	if err != nil {
		return Frame{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	f.Scope = sc
	if room != nil {
		f.room, f.head = room, head
	}
	return f, nil
}

// consumeTag is protowire.ConsumeTag with a one-byte tag, every field of
// a Notification but event_id, taken without a call.
func consumeTag(b []byte) (protowire.Number, protowire.Type, int) {
	if len(b) > 0 && b[0] < 0x80 && b[0] >= 1<<3 {
		return protowire.Number(b[0] >> 3), protowire.Type(b[0] & 7), 1
	}
	return protowire.ConsumeTag(b)
}

// consumeBytes is protowire.ConsumeBytes with a one-byte length taken
// without a call.
func consumeBytes(b []byte) ([]byte, int) {
	if len(b) > 0 && b[0] < 0x80 && int(b[0]) < len(b) {
		l := int(b[0])
		return b[1 : 1+l], 1 + l
	}
	return protowire.ConsumeBytes(b)
}

// parseEventID parses one occurrence of the event_id message into f and
// reports which of its required fields it carried. Occurrences merge like
// protobuf messages do: later fields overwrite earlier ones.
func parseEventID(b []byte, f *Frame) (sender, seq bool, err error) {
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return false, false, malformed("event_id tag", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num == fieldSenderID && typ == protowire.BytesType:
			v, m := consumeBytes(b)
			if m < 0 {
				return false, false, malformed("event_id.sender_id", protowire.ParseError(m))
			}
			f.SenderID, sender, n = v, true, m
		case num == fieldSequenceNumber && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return false, false, malformed("event_id.sequence_number", protowire.ParseError(m))
			}
			f.SequenceNumber, seq, n = uint32(v), true, m
		default:
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return false, false, malformed("event_id field", protowire.ParseError(n))
			}
		}
		b = b[n:]
	}
	return sender, seq, nil
}

// malformed wraps a wire-format error.
func malformed(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrMalformed, what, err)
}

// Notification fully decodes the frame body, checking required fields.
func (f Frame) Notification() (*rsbpb.Notification, error) {
	n := new(rsbpb.Notification)
	if err := proto.Unmarshal(f.Body, n); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return n, nil
}
