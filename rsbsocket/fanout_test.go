package rsbsocket

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// TestForwardedBeforeMalformed: frames forwarded from the same read as a
// malformed frame that ends the connection still reach their subscribers
// (the reader flushes what it forwarded before it gives up).
func TestForwardedBeforeMalformed(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	pub, sub := socktest.Dial(t, addr), socktest.Dial(t, addr)
	connOf(t, s, pub)
	connOf(t, s, sub)
	var wire []byte
	var want [][]byte
	for i := range 3 {
		body := socktest.Notification(t, "/fanout/", "utf-8-string", []byte{byte('a' + i)}, uint32(i+1))
		want = append(want, body)
		wire = frame.AppendFrame(wire, body)
	}
	wire = frame.AppendFrame(wire, []byte("GET / HTTP/1.1\r\n\r\n"))
	if _, err := pub.NetConn().Write(wire); err != nil { // one write: one read of the server
		t.Fatal(err)
	}
	for i, w := range want {
		if got := socktest.Recv(t, sub); !bytes.Equal(got, w) {
			t.Fatalf("frame %d: % x, want % x", i, got, w)
		}
	}
	testutil.WaitFor(t, socktest.Timeout, "the malformed frame to be counted", func() bool { return s.Stats().Drops[DropMalformed] == 1 })
}

// TestForwardManyTargetsInOrder: a publisher's frames spread over more
// targets than a flush writes on the reader (their writer goroutines
// write them) reach every subscriber complete and in order, as do all of
// them a subscriber whose interest covers every scope.
func TestForwardManyTargetsInOrder(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	pub := socktest.Dial(t, addr)
	connOf(t, s, pub)
	const targets, rounds = directTargetsMax + 4, 50
	subs := make([]*sockclient.ClientConn, targets)
	for k := range subs {
		subs[k] = socktest.Dial(t, addr)
		connOf(t, s, subs[k])
		socktest.Send(t, subs[k], socktest.Hello(t, socktest.UUID(byte(k+1)), "listener", fmt.Sprintf("/fanout/%02d/", k)))
	}
	all := socktest.Dial(t, addr)
	connOf(t, s, all)
	socktest.Send(t, all, socktest.Hello(t, socktest.UUID(200), "listener", "/fanout/"))
	testutil.WaitFor(t, socktest.Timeout, "the interests", func() bool {
		n := 0
		for _, c := range s.Connections() {
			if !c.Interest.All && len(c.Interest.Scopes) == 2 {
				n++
			}
		}
		return n == targets+1
	})
	var batch, every [][]byte
	want := make([][][]byte, targets)
	for r := range rounds {
		for k := range targets {
			body := socktest.Notification(t, fmt.Sprintf("/fanout/%02d/", k), "utf-8-string", []byte(fmt.Sprint(r)), uint32(r*targets+k+1))
			batch = append(batch, body)
			want[k] = append(want[k], body)
			every = append(every, body)
		}
	}
	if err := pub.SendMany(batch); err != nil {
		t.Fatal(err)
	}
	for k, sub := range subs {
		for i, w := range want[k] {
			if got := recvEvent(t, sub); !bytes.Equal(got, w) {
				t.Fatalf("subscriber %d, frame %d: got % x", k, i, got)
			}
		}
	}
	for i, w := range every {
		if got := recvEvent(t, all); !bytes.Equal(got, w) {
			t.Fatalf("the subscriber of all, frame %d: got % x", i, got)
		}
	}
}

// recvEvent is recv skipping the introspection frames relayed to c.
func recvEvent(t *testing.T, c *sockclient.ClientConn) []byte {
	t.Helper()
	for {
		body := socktest.Recv(t, c)
		f, err := frame.ParseFrame(body)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(f.Scope.String(), "/__rsb/") {
			return body
		}
	}
}
