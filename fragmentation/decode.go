package fragmentation

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// Decoding errors of the hand-written parser. errMerge is not a failure: the
// input repeats an embedded message, which protobuf merges, so the generic
// decoder takes over.
var (
	errMalformed = errors.New("malformed protobuf")
	errMissing   = errors.New("required field missing")
	errMerge     = errors.New("repeated embedded message")
)

// decode fills fr from a serialized FragmentedNotification. It returns a
// non-zero Reason (ReasonDecode or ReasonBadEventID) and the matching error
// when b cannot be offered.
//
// The fast path reads the outer message and, for fragments >= 1, the event id
// and data by hand, so their data is copied only once (into the event's
// buffer). Fragment 0 (and so every single-fragment event) is decoded by
// protobuf with required fields checked, so every delivered event can be
// serialized again. Inputs that repeat an embedded message take the generic
// protobuf decoder.
func (a *Assembler) decode(b []byte, fr *fragment) (Reason, error) {
	if len(b) > a.cfg.MaxFragmentSize {
		return ReasonDecode, decodeError(fmt.Errorf("%d bytes exceed %d", len(b), a.cfg.MaxFragmentSize))
	}
	r, err := fr.decodeFast(b)
	if errors.Is(err, errMerge) {
		*fr = fragment{}
		r, err = fr.decodeGeneric(b)
	}
	if err != nil {
		return ReasonDecode, decodeError(err)
	}
	if r != 0 {
		return r, reasonErrs[r]
	}
	return 0, nil
}

func decodeError(err error) error {
	return fmt.Errorf("%w: %w", reasonErrs[ReasonDecode], err)
}

// decodeFast decodes b by hand except for fragment 0's Notification.
func (fr *fragment) decodeFast(b []byte) (Reason, error) {
	note, total, index, err := parseOuter(b)
	if err != nil {
		return 0, err
	}
	fr.total, fr.index = total, index
	if index == 0 {
		h := new(rsbpb.Notification)
		if hdr, data, ok := splitData(note); ok && total > 1 {
			// The chunk stays in b until it is copied into the event's
			// buffer; only the small rest is decoded by protobuf.
			if err := proto.Unmarshal(hdr, h); err != nil {
				return 0, err
			}
			fr.header, fr.data, fr.headerSize = h, data, len(hdr)
			id := h.EventId
			return fr.setKey(id.GetSenderId(), id.GetSequenceNumber(), id != nil && id.SequenceNumber != nil), nil
		}
		if err := proto.Unmarshal(note, h); err != nil {
			return 0, err
		}
		fr.header, fr.data, fr.headerSize = h, h.Data, len(note)
		if h.Data != nil {
			fr.headerSize = max(0, fr.headerSize-dataFieldSize(len(h.Data)))
		}
		id := h.EventId
		return fr.setKey(id.GetSenderId(), id.GetSequenceNumber(), id != nil && id.SequenceNumber != nil), nil
	}
	id, data, err := parseInner(note)
	if err != nil {
		return 0, err
	}
	sender, seq, err := parseEventID(id)
	if err != nil {
		return 0, err
	}
	fr.data, fr.headerSize = data, -1
	return fr.setKey(sender, seq, true), nil
}

// decodeGeneric decodes b with protobuf and takes the fields from the message.
func (fr *fragment) decodeGeneric(b []byte) (Reason, error) {
	f := new(rsbpb.FragmentedNotification)
	if err := proto.Unmarshal(b, f); err != nil {
		return 0, err
	}
	return fr.fromMessage(f), nil
}

// field is one top-level field of a serialized message.
type field struct {
	num   protowire.Number
	typ   protowire.Type
	value []byte // bytes: the payload; varint: unused
	v     uint64 // varint value
}

// nextField consumes one field from b, checking it as protobuf does.
func nextField(b []byte) (f field, rest []byte, err error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num > protowire.MaxValidNumber {
		return f, nil, errMalformed
	}
	f.num, f.typ, b = num, typ, b[n:]
	switch typ {
	case protowire.BytesType:
		f.value, n = protowire.ConsumeBytes(b)
	case protowire.VarintType:
		f.v, n = protowire.ConsumeVarint(b)
	default:
		n = protowire.ConsumeFieldValue(num, typ, b)
	}
	if n < 0 {
		return f, nil, errMalformed
	}
	return f, b[n:], nil
}

// parseOuter reads a FragmentedNotification: the serialized Notification and
// the two counters (uint32 fields keep the low 32 bits, as protobuf does). A
// field with an unexpected wire type is an unknown field, as in protobuf.
func parseOuter(b []byte) (note []byte, total, index uint32, err error) {
	var haveNote, haveTotal, haveIndex bool
	for len(b) > 0 {
		var f field
		if f, b, err = nextField(b); err != nil {
			return nil, 0, 0, err
		}
		switch {
		case f.num == fieldNotification && f.typ == protowire.BytesType:
			if haveNote {
				return nil, 0, 0, errMerge
			}
			note, haveNote = f.value, true
		case f.num == fieldNumDataParts && f.typ == protowire.VarintType:
			total, haveTotal = uint32(f.v), true
		case f.num == fieldDataPart && f.typ == protowire.VarintType:
			index, haveIndex = uint32(f.v), true
		}
	}
	if !haveNote || !haveTotal || !haveIndex {
		return nil, 0, 0, errMissing
	}
	return note, total, index, nil
}

// parseInner reads the event id and data of a Notification, skipping the
// other fields (fragments >= 1 carry none that matter).
func parseInner(b []byte) (id, data []byte, err error) {
	haveID := false
	for len(b) > 0 {
		var f field
		if f, b, err = nextField(b); err != nil {
			return nil, nil, err
		}
		if f.typ != protowire.BytesType {
			continue
		}
		switch f.num {
		case fieldData:
			data = f.value
		case fieldEventID:
			if haveID {
				return nil, nil, errMerge
			}
			id, haveID = f.value, true
		}
	}
	if !haveID {
		return nil, nil, errMissing
	}
	return id, data, nil
}

// splitData separates a serialized Notification's data field from the rest:
// hdr is the Notification without it (a copy), data its payload (in note).
// ok is false unless note holds exactly one data field and parses.
func splitData(note []byte) (hdr, data []byte, ok bool) {
	start, end := -1, -1
	for b := note; len(b) > 0; {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, nil, false
		}
		if f.num == fieldData && f.typ == protowire.BytesType {
			if start >= 0 {
				return nil, nil, false
			}
			start, end, data = len(note)-len(b), len(note)-len(rest), f.value
		}
		b = rest
	}
	if start < 0 {
		return nil, nil, false
	}
	hdr = make([]byte, 0, len(note)-(end-start))
	hdr = append(append(hdr, note[:start]...), note[end:]...)
	return hdr, data, true
}

// parseEventID reads an EventId; both fields are required.
func parseEventID(b []byte) (sender []byte, seq uint32, err error) {
	var haveSender, haveSeq bool
	for len(b) > 0 {
		var f field
		if f, b, err = nextField(b); err != nil {
			return nil, 0, err
		}
		switch {
		case f.num == fieldSenderID && f.typ == protowire.BytesType:
			sender, haveSender = f.value, true
		case f.num == fieldSequenceNumber && f.typ == protowire.VarintType:
			seq, haveSeq = uint32(f.v), true
		}
	}
	if !haveSender || !haveSeq {
		return nil, 0, errMissing
	}
	return sender, seq, nil
}
