package socktest

import (
	"bytes"
	"testing"
	"time"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
	"github.com/rsbd/rsbd/proto/rsbpb/introspection"
	"github.com/rsbd/rsbd/proto/rsbpb/operatingsystem"
)

// Timeout bounds every wait in the tests; generous for -race on a busy
// machine.
const Timeout = 20 * time.Second

// PythonFrame is the 80-byte frame body a real rsb-python informer sent
// (reference capture): scope /example/sub/, utf-8-string "hello0", seq 0.
var PythonFrame = []byte("\x32\x0d/example/sub/\x3a\x0cutf-8-string\x4a\x06hello0" +
	"\x7a\x12\x10\xdc\xfa\xd7\x95\x8f\xaf\x98\x03\x18\x89\xfb\xd7\x95\x8f\xaf\x98\x03" +
	"\xe2\x06\x14\x0a\x10\x55\x86\xfd\x91\x90\x1f\x46\x58\x90\xe1\x25\xa8\xbf\xac\x52\x1a\x10\x00")

// PythonSender is the sender id inside PythonFrame.
var PythonSender = []byte("\x55\x86\xfd\x91\x90\x1f\x46\x58\x90\xe1\x25\xa8\xbf\xac\x52\x1a")

// Introspection names of the RSB specification, as rsbsocket exports them
// (its tests check that they agree); this package cannot import rsbsocket,
// whose tests import it.
const (
	ParticipantsScope = "/__rsb/introspection/participants/"
	HelloWireSchema   = ".rsb.protocol.introspection.Hello"
	ByeWireSchema     = ".rsb.protocol.introspection.Bye"
)

// Notification serializes a Notification on scope sc.
func Notification(t testing.TB, sc, schema string, data []byte, seq uint32) []byte {
	t.Helper()
	n := &rsbpb.Notification{
		EventId:    &rsbpb.EventId{SenderId: bytes.Repeat([]byte{0xab}, 16), SequenceNumber: proto.Uint32(seq)},
		Scope:      []byte(sc),
		WireSchema: []byte(schema),
		Data:       data,
		MetaData:   &rsbpb.EventMetaData{CreateTime: proto.Int64(1), SendTime: proto.Int64(2)},
	}
	b, err := proto.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// UUIDString formats 16 bytes as an RFC 4122 string.
func UUIDString(id []byte) string {
	const hex = "0123456789abcdef"
	var b []byte
	for i, c := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hex[c>>4], hex[c&15])
	}
	return string(b)
}

// ParticipantScope is the introspection scope of participant id.
func ParticipantScope(id []byte) string {
	return ParticipantsScope + UUIDString(id) + "/"
}

// Hello is the introspection event announcing participant id.
func Hello(t testing.TB, id []byte, kind, sc string) []byte {
	t.Helper()
	h := &introspection.Hello{
		Kind:  proto.String(kind),
		Id:    id,
		Scope: proto.String(sc),
		Process: &operatingsystem.Process{Id: proto.String("4242"), ProgramName: proto.String("test"),
			StartTime: proto.Uint64(1)},
		Host:      &operatingsystem.Host{Id: proto.String("host"), Hostname: proto.String("host")},
		Transport: []string{"socket://localhost:55555?tcpnodelay=1"},
	}
	data, err := proto.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return Notification(t, ParticipantScope(id), HelloWireSchema, data, 0)
}

// Bye is the introspection event removing participant id.
func Bye(t testing.TB, id []byte) []byte {
	t.Helper()
	data, err := proto.Marshal(&introspection.Bye{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	return Notification(t, ParticipantScope(id), ByeWireSchema, data, 1)
}

// UUID returns a test participant id: 16 times b.
func UUID(b byte) []byte { return bytes.Repeat([]byte{b}, 16) }

// Inside reports whether s's bytes lie in b.
func Inside(s string, b []byte) bool {
	p, start := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return len(s) > 0 && p >= start && p < start+uintptr(len(b))
}
