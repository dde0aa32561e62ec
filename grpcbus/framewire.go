package grpcbus

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	pbf "github.com/rsbd/rsbd/proto/grpcbuspb"
)

// The protobuf wire numbers of TransportFrame and its variants
// (proto/grpcbus/transport.proto; append only).
const (
	numStreamID  protowire.Number = 1
	numSequence  protowire.Number = 2
	numMessage   protowire.Number = 3
	numWindow    protowire.Number = 4
	numHalfClose protowire.Number = 5
	numTrailers  protowire.Number = 6
	numCancel    protowire.Number = 7
	numHeaders   protowire.Number = 8
	numPing      protowire.Number = 9
	numFirst     protowire.Number = 1 // first field of a variant
	numSecond    protowire.Number = 2 // second field of a variant
	errTruncated                  = "truncated field"
	errWrongType                  = "wrong wire type"
)

var errFrame = errors.New("frame")

// appendFrame appends fr in protobuf binary form, as proto.Marshal writes
// it, without reflection: frames are the per-message cost of a stream.
func appendFrame(b []byte, fr *pbf.TransportFrame) []byte {
	if v, ok := fr.Frame.(*pbf.TransportFrame_Message); ok {
		return appendMessageFrame(b, fr.StreamId, fr.StreamSequence, v.Message.GetPayload())
	}
	b = appendVarintField(b, numStreamID, fr.StreamId)
	b = appendVarintField(b, numSequence, fr.StreamSequence)
	var inner []byte
	var num protowire.Number
	switch v := fr.Frame.(type) {
	case *pbf.TransportFrame_WindowUpdate:
		num, inner = numWindow, appendVarintField(nil, numFirst, uint64(v.WindowUpdate.GetDelta()))
	case *pbf.TransportFrame_HalfClose:
		num = numHalfClose
	case *pbf.TransportFrame_Trailers:
		inner = appendVarintField(nil, numFirst, uint64(v.Trailers.GetStatus()))
		num, inner = numTrailers, appendBytesField(inner, numSecond, []byte(v.Trailers.GetStatusMessage()))
	case *pbf.TransportFrame_Cancel:
		inner = appendVarintField(nil, numFirst, uint64(v.Cancel.GetStatus()))
		num, inner = numCancel, appendBytesField(inner, numSecond, []byte(v.Cancel.GetReason()))
	case *pbf.TransportFrame_Headers:
		num = numHeaders
	case *pbf.TransportFrame_Ping:
		inner = appendVarintField(nil, numFirst, v.Ping.GetData())
		num, inner = numPing, appendVarintField(inner, numSecond, boolBit(v.Ping.GetAck()))
	default:
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, inner)
}

// appendMessageFrame appends a Message frame with payload p, written in
// place: a message is copied once, and no TransportFrame is built for it.
func appendMessageFrame(b []byte, id, seq uint64, p []byte) []byte {
	b = appendVarintField(b, numStreamID, id)
	b = appendVarintField(b, numSequence, seq)
	size := 0
	if len(p) > 0 {
		size = protowire.SizeTag(numFirst) + protowire.SizeBytes(len(p))
	}
	b = protowire.AppendTag(b, numMessage, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(size))
	return appendBytesField(b, numFirst, p)
}

func boolBit(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendBytesField(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// wireFrame is a TransportFrame as read from its protobuf form, without
// allocating: its ids, the number of its variant (0 for none) and the
// variant's fields.
type wireFrame struct {
	streamID uint64
	seq      uint64
	variant  protowire.Number
	f        variantFields
}

// parseFrame reads a frame in protobuf binary form.
func parseFrame(b []byte) (*pbf.TransportFrame, error) {
	w, err := parseWire(b)
	if err != nil {
		return nil, err
	}
	return w.frame(), nil
}

// parseWire reads a frame in protobuf binary form. Every length is checked
// against what is left; unknown fields are skipped; a variant given twice
// keeps the last, as protobuf's oneof does.
func parseWire(b []byte) (wireFrame, error) {
	var w wireFrame
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return w, fmt.Errorf("%w: %w", errFrame, protowire.ParseError(n))
		}
		b = b[n:]
		var err error
		switch {
		case num == numStreamID && typ == protowire.VarintType:
			w.streamID, n = protowire.ConsumeVarint(b)
		case num == numSequence && typ == protowire.VarintType:
			w.seq, n = protowire.ConsumeVarint(b)
		case num >= numMessage && num <= numPing && typ == protowire.BytesType:
			var inner []byte
			if inner, n = protowire.ConsumeBytes(b); n >= 0 {
				w.variant, w.f = num, variantFields{}
				err = w.f.parse(inner)
			}
		case num >= numStreamID && num <= numPing:
			return w, fmt.Errorf("%w: field %d: %s", errFrame, num, errWrongType)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return w, fmt.Errorf("%w: field %d: %w", errFrame, num, protowire.ParseError(n))
		}
		if err != nil {
			return w, err
		}
		b = b[n:]
	}
	return w, nil
}

// variantFields are the two scalar fields a variant may carry.
type variantFields struct {
	first  uint64
	bytes  []byte // field 1 as bytes (Message.payload)
	second uint64
	text   []byte // field 2 as bytes (status message, reason)
}

// frame builds the TransportFrame w stands for.
func (w *wireFrame) frame() *pbf.TransportFrame {
	fr := &pbf.TransportFrame{StreamId: w.streamID, StreamSequence: w.seq}
	f := &w.f
	switch w.variant {
	case 0:
	case numMessage:
		fr.Frame = &pbf.TransportFrame_Message{Message: &pbf.Message{Payload: f.bytes}}
	case numWindow:
		fr.Frame = &pbf.TransportFrame_WindowUpdate{WindowUpdate: &pbf.WindowUpdate{Delta: uint32(f.first)}}
	case numHalfClose:
		fr.Frame = &pbf.TransportFrame_HalfClose{HalfClose: &pbf.HalfClose{}}
	case numTrailers:
		fr.Frame = &pbf.TransportFrame_Trailers{Trailers: &pbf.Trailers{Status: uint32(f.first), StatusMessage: validText(f.text)}}
	case numCancel:
		fr.Frame = &pbf.TransportFrame_Cancel{Cancel: &pbf.Cancel{Status: uint32(f.first), Reason: validText(f.text)}}
	case numHeaders:
		fr.Frame = &pbf.TransportFrame_Headers{Headers: &pbf.Headers{}}
	default:
		fr.Frame = &pbf.TransportFrame_Ping{Ping: &pbf.Ping{Data: f.first, Ack: f.second != 0}}
	}
	return fr
}

// parse reads fields 1 and 2 of a variant, as varints or bytes; others
// are skipped.
func (f *variantFields) parse(b []byte) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: variant: %w", errFrame, protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num == numFirst && typ == protowire.VarintType:
			f.first, n = protowire.ConsumeVarint(b)
		case num == numFirst && typ == protowire.BytesType:
			f.bytes, n = protowire.ConsumeBytes(b)
		case num == numSecond && typ == protowire.VarintType:
			f.second, n = protowire.ConsumeVarint(b)
		case num == numSecond && typ == protowire.BytesType:
			f.text, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("%w: variant field %d: %s", errFrame, num, errTruncated)
		}
		if len(f.text) > maxStatusText {
			return fmt.Errorf("%w: status text of %d bytes", errFrame, len(f.text))
		}
		b = b[n:]
	}
	return nil
}

// validText is b as a string, invalid UTF-8 replaced, as protobuf strings
// must be valid.
func validText(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }
