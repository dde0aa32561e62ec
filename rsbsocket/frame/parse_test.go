package frame_test

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/scope"
)

// Field numbers of rsb.protocol.Notification, as the specification gives
// them.
const (
	numScope   protowire.Number = 6
	numEventID protowire.Number = 108
)

// rpcErrorReply is the 127-byte error reply of the reference capture, with
// made-up ids and the capture's timestamps.
var rpcErrorReply = []byte("\x32\x0e/rpc/svc/fail/\x3a\x0cutf-8-string\x4a\x06boom x" +
	"\x6a\x14\x0a\x10" + string(bytes.Repeat([]byte{0x11}, 16)) + "\x10\x00" +
	"\x72\x05REPLY" +
	"\x7a\x23\x10\xdc\xfa\xd7\x95\x8f\xaf\x98\x03\x18\x89\xfb\xd7\x95\x8f\xaf\x98\x03" +
	"\x3a\x0f\x0a\x0arsb:error?\x12\x011" +
	"\xe2\x06\x14\x0a\x10" + string(bytes.Repeat([]byte{0x22}, 16)) + "\x10\x00")

func TestParseFramePythonCapture(t *testing.T) {
	if len(socktest.PythonFrame) != 80 {
		t.Fatalf("capture is %d bytes, want 80", len(socktest.PythonFrame))
	}
	f, err := frame.ParseFrame(socktest.PythonFrame)
	if err != nil {
		t.Fatal(err)
	}
	if f.Scope != scope.MustParse("/example/sub/") || string(f.WireSchema) != "utf-8-string" ||
		string(f.Data) != "hello0" || !bytes.Equal(f.SenderID, socktest.PythonSender) || f.SequenceNumber != 0 ||
		len(f.Method) != 0 {
		t.Fatalf("ParseFrame = %+v", f)
	}
	n, err := f.Notification()
	if err != nil {
		t.Fatal(err)
	}
	if n.GetMetaData().GetCreateTime() == 0 || n.GetMetaData().GetSendTime() < n.GetMetaData().GetCreateTime() {
		t.Fatalf("meta data %v", n.GetMetaData())
	}
}

func TestParseFrameRPCReply(t *testing.T) {
	if len(rpcErrorReply) != 127 {
		t.Fatalf("reply is %d bytes, want 127", len(rpcErrorReply))
	}
	f, err := frame.ParseFrame(rpcErrorReply)
	if err != nil {
		t.Fatal(err)
	}
	if f.Scope.String() != "/rpc/svc/fail/" || string(f.Method) != "REPLY" || f.SenderID[0] != 0x22 {
		t.Fatalf("ParseFrame = %+v", f)
	}
	n, err := f.Notification()
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Causes) != 1 || n.Causes[0].SenderId[0] != 0x11 || string(n.MetaData.UserInfos[0].Key) != "rsb:error?" {
		t.Fatalf("Notification = %v", n)
	}
}

func TestParseFrameErrors(t *testing.T) {
	eventID := func(b []byte, withSeq bool) []byte {
		var id []byte
		id = protowire.AppendTag(id, 1, protowire.BytesType)
		id = protowire.AppendBytes(id, socktest.UUID(7))
		if withSeq {
			id = protowire.AppendTag(id, 2, protowire.VarintType)
			id = protowire.AppendVarint(id, 9)
		}
		b = protowire.AppendTag(b, numEventID, protowire.BytesType)
		return protowire.AppendBytes(b, id)
	}
	scopeField := func(b []byte, s string) []byte {
		b = protowire.AppendTag(b, numScope, protowire.BytesType)
		return protowire.AppendBytes(b, []byte(s))
	}
	valid := eventID(scopeField(nil, "/a/"), true)
	if _, err := frame.ParseFrame(valid); err != nil {
		t.Fatalf("valid frame: %v", err)
	}
	tests := []struct {
		name string
		body []byte
	}{
		{"empty", nil},
		{"no event id", scopeField(nil, "/a/")},
		{"no sequence number", eventID(scopeField(nil, "/a/"), false)},
		{"no scope", eventID(nil, true)},
		{"invalid scope", eventID(scopeField(nil, "a//b"), true)},
		{"scope as varint", eventID(protowire.AppendVarint(protowire.AppendTag(nil, numScope, protowire.VarintType), 1), true)},
		{"truncated", valid[:len(valid)-1]},
		{"length past end", append(scopeField(nil, "/a/"), 0x3a, 0x7f, 'x')},
		{"field number 0", append([]byte{0x02, 0x00}, valid...)},
		{"text", []byte("hello, this is not a notification")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := frame.ParseFrame(tt.body); !errors.Is(err, frame.ErrMalformed) {
				t.Fatalf("ParseFrame = %v, want ErrMalformed", err)
			}
		})
	}
}

func TestParseFrameLastScopeWins(t *testing.T) {
	body := append(protowire.AppendBytes(protowire.AppendTag(nil, numScope, protowire.BytesType), []byte("/first/")), socktest.PythonFrame...)
	f, err := frame.ParseFrame(body)
	if err != nil || f.Scope.String() != "/example/sub/" {
		t.Fatalf("ParseFrame = %v, %v", f.Scope, err)
	}
}

// checkAgainstProto compares ParseFrame with a full protobuf decode: every
// notification the decoder accepts with a valid scope must parse to the same
// fields.
func checkAgainstProto(t *testing.T, data []byte) {
	f, err := frame.ParseFrame(data)
	if err == nil && f.Scope.IsZero() {
		t.Fatal("ParseFrame accepted a frame without a scope")
	}
	// A FrameParser, whose scope cache carries over from earlier inputs,
	// parses exactly as ParseFrame does.
	g, gerr := checkParser.Parse(data)
	if (gerr == nil) != (err == nil) || g.Scope != f.Scope || g.SequenceNumber != f.SequenceNumber ||
		!bytes.Equal(g.Data, f.Data) {
		t.Fatalf("FrameParser = %+v, %v; ParseFrame = %+v, %v", g, gerr, f, err)
	}
	var n rsbpb.Notification
	if proto.Unmarshal(data, &n) != nil || n.Scope == nil {
		return
	}
	sc, serr := scope.Parse(string(n.Scope))
	if serr != nil {
		if err == nil {
			t.Fatalf("ParseFrame accepted invalid scope %q", n.Scope)
		}
		return
	}
	if err != nil {
		t.Fatalf("ParseFrame rejected a notification the decoder accepts: %v", err)
	}
	if f.Scope != sc || f.SequenceNumber != n.EventId.GetSequenceNumber() ||
		!bytes.Equal(f.SenderID, n.EventId.GetSenderId()) || !bytes.Equal(f.WireSchema, n.WireSchema) ||
		!bytes.Equal(f.Method, n.Method) || !bytes.Equal(f.Data, n.Data) {
		t.Fatalf("ParseFrame = %+v, decoder = %v", f, &n)
	}
}

// checkParser is the FrameParser checkAgainstProto compares with
// ParseFrame; tests and fuzz inputs call it one at a time.
var checkParser frame.FrameParser

func TestParseFrameMatchesProto(t *testing.T) {
	for _, body := range [][]byte{
		socktest.PythonFrame, rpcErrorReply,
		socktest.Notification(t, "/", "", nil, 0),
		socktest.Notification(t, "/a/b/c", ".rsb.protocol.EventId", []byte{1, 2, 3}, 1<<31),
		socktest.Hello(t, socktest.UUID(1), "listener", "/x/"),
	} {
		if _, err := frame.ParseFrame(body); err != nil {
			t.Errorf("ParseFrame: %v", err)
		}
		checkAgainstProto(t, body)
	}
}

func FuzzParseFrame(f *testing.F) {
	f.Add(socktest.PythonFrame)
	f.Add(rpcErrorReply)
	f.Add([]byte{})
	f.Add([]byte("\x32\x03/a/\xe2\x06\x00"))
	f.Add(socktest.Notification(f, "/a/b/", "utf-8-string", []byte("x"), 3))
	f.Add(socktest.Hello(f, socktest.UUID(1), "listener", "/x/"))
	f.Add(socktest.Bye(f, socktest.UUID(1)))
	f.Fuzz(checkAgainstProto)
}
