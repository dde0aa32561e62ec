package meshmessage

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

// rawPrefix returns a Package prefix with the given magic and version and
// length fields.
func rawPrefix(magic, version string, length, headerLen int32) []byte {
	b := append([]byte(magic), version...)
	b = binary.BigEndian.AppendUint32(b, uint32(length))
	return binary.BigEndian.AppendUint32(b, uint32(headerLen))
}

// TestListenerBadInput checks each kind of bad Package closes its own connection
// without a reply and is counted, while a client connected beside it
// keeps its subscription and its answers, and a well-formed Package with
// a bad message gets a failure code on a connection that stays open.
func TestListenerBadInput(t *testing.T) {
	s, bus, addr := startServer(t, Config{})
	good := dial(t, addr)
	good.write("HELLO_REQUEST", "1", nil)
	good.expect("HELLO_RESPONSE")
	good.write("SUBSCRIBE_REQUEST", "2", Subscription{Topics: []SubscriptionItem{{Topic: "/ok/"}}})
	good.expect("SUBSCRIBE_RESPONSE")
	good.write("LISTEN_REQUEST", "3", nil)
	good.expect("LISTEN_RESPONSE")

	header := []byte(`{"cmd":"HEARTBEAT_REQUEST","seq":"1"}`)
	cases := []struct {
		name, reason string
		bytes        []byte
		halfClose    bool
	}{
		{"truncated", RejectTruncated, append(rawPrefix(Magic, Version, 13+100, 20), header[:10]...), true},
		{"truncated prefix", RejectTruncated, []byte("EventMesh00"), true},
		{"bad magic", RejectBadMagic, rawPrefix("EventMash", Version, 13, 0), false},
		{"bad version", RejectBadVersion, rawPrefix(Magic, "0001", 13, 0), false},
		{"oversize", RejectTooLarge, rawPrefix(Magic, Version, MaxPackage, 10), false},
		{"negative length", RejectBadLength, rawPrefix(Magic, Version, -5, 0), false},
		{"header past the length", RejectBadLength, rawPrefix(Magic, Version, 13+4, 5), false},
		{"bad header JSON", RejectBadHeader, append(rawPrefix(Magic, Version, int32(13+7), 7), `{"cmd":`...), false},
		{"header without a command", RejectBadHeader, append(rawPrefix(Magic, Version, int32(13+2), 2), `{}`...), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			if _, err := c.nc.Write(tc.bytes); err != nil {
				t.Fatal(err)
			}
			if tc.halfClose {
				if err := c.nc.(*net.TCPConn).CloseWrite(); err != nil {
					t.Fatal(err)
				}
			}
			c.closed()
			testutil.WaitFor(t, 10*time.Second, tc.reason+" counted", func() bool { return s.Stats().Rejected[tc.reason] >= 1 })
		})
	}

	hello := dial(t, addr)
	hello.writeRaw([]byte(`{"cmd":"HELLO_REQUEST","seq":"1"}`), []byte(`[`))
	if h, _ := hello.response("HELLO_RESPONSE"); h.Code != CodeFail {
		t.Fatalf("HELLO with a bad user agent: %+v", h)
	}
	hello.closed()

	bad := dial(t, addr)
	for _, body := range [][]byte{[]byte(`{"topic":`), []byte(`{"topic":"no scope","body":"x"}`), []byte(`{"topic":"/ok/","properties":{"Bad Name":"x"}}`)} {
		bad.writeRaw([]byte(`{"cmd":"ASYNC_MESSAGE_TO_SERVER","seq":"9"}`), body)
		if h, _ := bad.response("ASYNC_MESSAGE_TO_SERVER_ACK"); h.Code != CodeFail || h.Seq != "9" || h.Desc == "" {
			t.Fatalf("bad message %s: %+v", body, h)
		}
	}
	bad.writeRaw([]byte(`{"cmd":"SUBSCRIBE_REQUEST","seq":"10"}`), []byte(`[1]`))
	if h, _ := bad.response("SUBSCRIBE_RESPONSE"); h.Code != CodeFail {
		t.Fatalf("bad subscription: %+v", h)
	}
	bad.write("NO_SUCH_COMMAND", "11", nil)
	bad.write("HEARTBEAT_REQUEST", "12", nil)
	bad.expect("HEARTBEAT_RESPONSE")

	inf, err := bus.NewInformer(scope.MustParse("/ok/"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := inf.Publish(ctx, "still here"); err != nil {
		t.Fatal(err)
	}
	if m := message(t, good.expect("ASYNC_MESSAGE_TO_CLIENT")["ASYNC_MESSAGE_TO_CLIENT"]); m.Body != "still here" {
		t.Fatalf("the good client got %+v", m)
	}
	good.write("HEARTBEAT_REQUEST", "4", nil)
	good.expect("HEARTBEAT_RESPONSE")
	// A bad connection's close is counted by its own goroutine, which may
	// still be ending when the good client's answer arrives.
	testutil.WaitForMsg(t, 10*time.Second, func() string { return fmt.Sprintf("stats %+v", s.Stats()) }, func() bool {
		st := s.Stats()
		return st.Closed[CloseBadPackage] == int64(len(cases))+1 && st.Rejected[RejectMalformed] == 5 && st.Rejected[RejectCommand] == 1 && st.Connections == 2
	})
}
