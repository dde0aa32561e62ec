package grpcbus

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/grpcbuspb"
)

// TestFrameFieldNumbers pins the TransportFrame's wire numbers to those of
// the event-bus gRPC transport.
func TestFrameFieldNumbers(t *testing.T) {
	cases := []struct {
		fr  *grpcbuspb.TransportFrame
		num protowire.Number
	}{
		{&grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_Message{Message: &grpcbuspb.Message{}}}, 3},
		{&grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_WindowUpdate{WindowUpdate: &grpcbuspb.WindowUpdate{}}}, 4},
		{&grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_HalfClose{HalfClose: &grpcbuspb.HalfClose{}}}, 5},
		{&grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_Trailers{Trailers: &grpcbuspb.Trailers{}}}, 6},
		{&grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_Cancel{Cancel: &grpcbuspb.Cancel{}}}, 7},
		{&grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_Headers{Headers: &grpcbuspb.Headers{}}}, 8},
		{&grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_Ping{Ping: &grpcbuspb.Ping{}}}, 9},
	}
	for _, c := range cases {
		b, err := proto.Marshal(c.fr)
		if err != nil {
			t.Fatal(err)
		}
		if num, typ, _ := protowire.ConsumeTag(b); num != c.num || typ != protowire.BytesType {
			t.Errorf("%T: field %d, want %d", c.fr.Frame, num, c.num)
		}
	}
	b, _ := proto.Marshal(&grpcbuspb.TransportFrame{StreamId: 1, StreamSequence: 2})
	if string(b) != "\x08\x01\x10\x02" {
		t.Errorf("stream_id and stream_sequence encode as % x", b)
	}
}

func TestFrameRoundTrip(t *testing.T) {
	for _, f := range []string{WireProto, WireJSON} {
		in := &grpcbuspb.TransportFrame{StreamId: 7, StreamSequence: 3,
			Frame: &grpcbuspb.TransportFrame_Message{Message: &grpcbuspb.Message{Payload: []byte{0, 1, 0xff}}}}
		b, err := encodeFrame(nil, f, in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := decodeFrame(f, b)
		if err != nil || !proto.Equal(in, out) {
			t.Errorf("%s: %v %v", f, out, err)
		}
	}
}

// TestFrameWireMatchesProtobuf checks the reflection-free codec against
// protobuf's own on every variant.
func TestFrameWireMatchesProtobuf(t *testing.T) {
	for _, fr := range sampleFrames() {
		want, _ := proto.Marshal(fr)
		if got := appendFrame(nil, fr); string(got) != string(want) {
			t.Errorf("%v: % x, protobuf % x", fr, got, want)
		}
		got, err := parseFrame(want)
		if err != nil || !proto.Equal(got, fr) {
			t.Errorf("%v: parsed %v %v", fr, got, err)
		}
	}
}

func sampleFrames() []*grpcbuspb.TransportFrame {
	return []*grpcbuspb.TransportFrame{
		{StreamId: 1, StreamSequence: 1, Frame: &grpcbuspb.TransportFrame_Message{Message: &grpcbuspb.Message{Payload: []byte("x")}}},
		{StreamId: 1 << 40, StreamSequence: 300, Frame: &grpcbuspb.TransportFrame_Message{Message: &grpcbuspb.Message{}}},
		{StreamId: 2, Frame: &grpcbuspb.TransportFrame_WindowUpdate{WindowUpdate: &grpcbuspb.WindowUpdate{Delta: 64}}},
		{StreamId: 2, Frame: &grpcbuspb.TransportFrame_HalfClose{HalfClose: &grpcbuspb.HalfClose{}}},
		{StreamId: 3, Frame: &grpcbuspb.TransportFrame_Trailers{Trailers: &grpcbuspb.Trailers{Status: 5, StatusMessage: "nf"}}},
		{StreamId: 3, Frame: &grpcbuspb.TransportFrame_Trailers{Trailers: &grpcbuspb.Trailers{}}},
		{StreamId: 4, Frame: &grpcbuspb.TransportFrame_Cancel{Cancel: &grpcbuspb.Cancel{Status: 1, Reason: "bye"}}},
		{StreamId: 5, Frame: &grpcbuspb.TransportFrame_Headers{Headers: &grpcbuspb.Headers{}}},
		{Frame: &grpcbuspb.TransportFrame_Ping{Ping: &grpcbuspb.Ping{Data: 9, Ack: true}}},
		{Frame: &grpcbuspb.TransportFrame_Ping{Ping: &grpcbuspb.Ping{}}},
	}
}

func TestDecodeFrameRejects(t *testing.T) {
	ping0, _ := proto.Marshal(&grpcbuspb.TransportFrame{StreamId: 0, Frame: &grpcbuspb.TransportFrame_Cancel{Cancel: &grpcbuspb.Cancel{}}})
	pingN, _ := proto.Marshal(&grpcbuspb.TransportFrame{StreamId: 3, Frame: &grpcbuspb.TransportFrame_Ping{Ping: &grpcbuspb.Ping{}}})
	empty, _ := proto.Marshal(&grpcbuspb.TransportFrame{StreamId: 3})
	for name, c := range map[string]struct {
		f    string
		data []byte
	}{
		"garbage": {WireProto, []byte{0xff, 0xff}}, "no variant": {WireProto, empty},
		"cancel on 0": {WireProto, ping0}, "ping on a stream": {WireProto, pingN},
		"bad json": {WireJSON, []byte("{")}, "unknown format": {"xml", empty},
	} {
		if _, err := decodeFrame(c.f, c.data); !errors.Is(err, ErrBadFrame) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzDecodeFrame feeds arbitrary bytes to the frame decoders: they must
// not panic, accept the same frames, and what they accept must encode
// again and decode the same.
func FuzzDecodeFrame(f *testing.F) {
	for _, fr := range sampleFrames() {
		for _, w := range []string{WireProto, WireJSON} {
			b, _ := encodeFrame(nil, w, fr)
			f.Add(w == WireJSON, b)
		}
	}
	f.Add(false, []byte{})
	f.Add(false, []byte{0x08})
	f.Add(false, []byte{0x1a, 0x05, 0x0a, 0x09})
	f.Add(false, []byte{0x08, 0x01, 0x32, 0x02, 0x12, 0xc0})
	f.Add(true, []byte(`{"streamId":"1","message":{"payload":"!!"}}`))
	f.Fuzz(func(t *testing.T, json bool, data []byte) {
		w := WireProto
		if json {
			w = WireJSON
		}
		fr, err := decodeFrame(w, data)
		in, inErr := readFrame(w, data)
		if (err == nil) != (inErr == nil) {
			t.Fatalf("decodeFrame: %v; readFrame: %v", err, inErr)
		}
		if err != nil {
			return
		}
		checkFrameIn(t, in, fr)
		if w == WireProto {
			ref := new(grpcbuspb.TransportFrame)
			if err := proto.Unmarshal(appendFrame(nil, fr), ref); err != nil || !proto.Equal(ref, fr) {
				t.Fatalf("protobuf reads the re-encoded frame as %v (%v), want %v", ref, err, fr)
			}
		}
		b, err := encodeFrame(nil, w, fr)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeFrame(w, b)
		if err != nil || !proto.Equal(fr, again) {
			t.Fatalf("re-decoding: %v %v", again, err)
		}
	})
}

// checkFrameIn fails unless in is what readFrame must make of fr.
func checkFrameIn(t *testing.T, in frameIn, fr *grpcbuspb.TransportFrame) {
	t.Helper()
	if in.streamID != fr.StreamId || in.seq != fr.StreamSequence {
		t.Fatalf("readFrame: ids %d/%d, want %d/%d", in.streamID, in.seq, fr.StreamId, fr.StreamSequence)
	}
	if m, ok := fr.Frame.(*grpcbuspb.TransportFrame_Message); ok {
		if !in.msg || in.fr != nil || string(in.payload) != string(m.Message.Payload) {
			t.Fatalf("readFrame: %+v for %v", in, fr)
		}
		return
	}
	if in.msg || !proto.Equal(in.fr, fr) {
		t.Fatalf("readFrame: %+v for %v", in, fr)
	}
}

// TestReadFrame reads every sample frame in both wire formats as the
// endpoint does.
func TestReadFrame(t *testing.T) {
	for _, fr := range sampleFrames() {
		for _, w := range []string{WireProto, WireJSON} {
			b, err := encodeFrame(nil, w, fr)
			if err != nil {
				t.Fatal(err)
			}
			in, err := readFrame(w, b)
			if err != nil {
				t.Fatalf("%s %v: %v", w, fr, err)
			}
			checkFrameIn(t, in, fr)
		}
	}
}

func TestTimeoutFormat(t *testing.T) {
	for _, d := range []time.Duration{time.Microsecond, 1500 * time.Millisecond, 3 * time.Hour, 1000 * time.Hour} {
		got, ok := parseTimeout(formatTimeout(d))
		if !ok || got < d && d < maxTimeout || got > d+time.Minute {
			t.Errorf("%v -> %q -> %v %v", d, formatTimeout(d), got, ok)
		}
	}
	for _, s := range []string{"", "1", "1x", "-1m", "123456789m", "99999999H"} {
		if d, ok := parseTimeout(s); ok && d > maxTimeout {
			t.Errorf("%q -> %v", s, d)
		}
	}
}

func TestSplitMethod(t *testing.T) {
	for in, want := range map[string]bool{"/a.B/C": true, "a.B/C": false, "/a.B/": false, "//C": false, "/a/b/c": false} {
		if _, _, ok := splitMethod(in); ok != want {
			t.Errorf("%q: %v", in, ok)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
	for name, c := range map[string]Config{
		"format": {WireFormat: "xml"}, "formats": {WireFormats: []string{"avro"}},
		"window": {InitialWindow: -1}, "ping": {PingInterval: time.Minute, PingTimeout: time.Second},
		"prefix": {Prefix: "no slash"}, "window bytes": {WindowBytes: -1},
		"max window": {MaxWindow: maxWindow + 1}, "initial window": {InitialWindow: maxWindow + 1},
	} {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
