package grpcbus

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/grpcbuspb"
)

// Wire formats: how messages and frames are encoded.
const (
	// WireProto is protobuf's binary encoding.
	WireProto = "proto"
	// WireJSON is protobuf's JSON mapping (protojson); a frame's payload is
	// base64 in it.
	WireJSON = "json"
)

func knownFormat(f string) bool { return f == WireProto || f == WireJSON }

// marshal encodes a gRPC message in wire format f.
func marshal(f string, v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("grpcbus: message %T is not a protobuf message", v)
	}
	if f == WireJSON {
		return protojson.Marshal(m)
	}
	return proto.Marshal(m)
}

// unmarshal decodes a gRPC message in wire format f into v.
func unmarshal(f string, data []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("grpcbus: message %T is not a protobuf message", v)
	}
	if f == WireJSON {
		return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, m)
	}
	return proto.Unmarshal(data, m)
}

// encodeFrame encodes fr in wire format f; the protobuf form is appended
// to b.
func encodeFrame(b []byte, f string, fr *grpcbuspb.TransportFrame) ([]byte, error) {
	if f == WireJSON {
		return protojson.Marshal(fr)
	}
	size := frameOverhead
	if m, ok := fr.Frame.(*grpcbuspb.TransportFrame_Message); ok {
		size += len(m.Message.GetPayload())
	}
	return appendFrame(slices.Grow(b[:0], size), fr), nil
}

// frameIn is a received frame: a Message as its fields alone (receiving
// a message builds no TransportFrame), any other frame decoded.
type frameIn struct {
	streamID uint64
	seq      uint64
	msg      bool                      // a Message frame
	payload  []byte                    // a Message's payload
	fr       *grpcbuspb.TransportFrame // any other frame
}

// readFrame decodes and checks a frame received in wire format f, as
// decodeFrame does.
func readFrame(f string, data []byte) (frameIn, error) {
	if f != WireProto {
		fr, err := decodeFrame(f, data)
		if err != nil {
			return frameIn{}, err
		}
		if m, ok := fr.Frame.(*grpcbuspb.TransportFrame_Message); ok {
			return frameIn{streamID: fr.StreamId, seq: fr.StreamSequence, msg: true, payload: m.Message.Payload}, nil
		}
		return frameIn{streamID: fr.StreamId, seq: fr.StreamSequence, fr: fr}, nil
	}
	if len(data) > maxFrameBytes {
		return frameIn{}, fmt.Errorf("%w: %d bytes", ErrBadFrame, len(data))
	}
	w, err := parseWire(data)
	if err != nil {
		return frameIn{}, fmt.Errorf("%w: %w", ErrBadFrame, err)
	}
	if err := checkFrame(w.variant != 0, w.variant == numPing, w.streamID); err != nil {
		return frameIn{}, err
	}
	if w.variant == numMessage {
		return frameIn{streamID: w.streamID, seq: w.seq, msg: true, payload: w.f.bytes}, nil
	}
	return frameIn{streamID: w.streamID, seq: w.seq, fr: w.frame()}, nil
}

// decodeFrame decodes and checks a frame received in wire format f: it must
// carry exactly one variant, and every variant but Ping a stream id.
func decodeFrame(f string, data []byte) (*grpcbuspb.TransportFrame, error) {
	if len(data) > maxFrameBytes {
		return nil, fmt.Errorf("%w: %d bytes", ErrBadFrame, len(data))
	}
	var fr *grpcbuspb.TransportFrame
	var err error
	switch f {
	case WireProto:
		fr, err = parseFrame(data)
	case WireJSON:
		fr = new(grpcbuspb.TransportFrame)
		err = protojson.Unmarshal(data, fr)
	default:
		return nil, fmt.Errorf("%w: %w %q", ErrBadFrame, ErrWireFormat, f)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadFrame, err)
	}
	_, ping := fr.Frame.(*grpcbuspb.TransportFrame_Ping)
	if err := checkFrame(fr.Frame != nil, ping, fr.StreamId); err != nil {
		return nil, err
	}
	return fr, nil
}

// checkFrame checks a decoded frame: it has a variant, and a stream id
// unless it is a Ping, which has none.
func checkFrame(hasVariant, ping bool, id uint64) error {
	if !hasVariant {
		return fmt.Errorf("%w: no variant", ErrBadFrame)
	}
	if ping != (id == 0) {
		return fmt.Errorf("%w: stream id %d for a ping=%v frame", ErrBadFrame, id, ping)
	}
	return nil
}
