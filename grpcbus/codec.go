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
	if fr.Frame == nil {
		return nil, fmt.Errorf("%w: no variant", ErrBadFrame)
	}
	if _, ping := fr.Frame.(*grpcbuspb.TransportFrame_Ping); ping != (fr.StreamId == 0) {
		return nil, fmt.Errorf("%w: stream id %d for %T", ErrBadFrame, fr.StreamId, fr.Frame)
	}
	return fr, nil
}
