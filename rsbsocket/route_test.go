package rsbsocket

import (
	"bytes"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
)

// TestForwardRouteFollowsInterest: a publisher's frames on one scope are
// looked up once and their targets remembered (forwarding.route); a
// subscriber that announces a listener on that scope, and one that moves
// its listener elsewhere, change where the next frame goes.
func TestForwardRouteFollowsInterest(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	pub, a, b := socktest.Dial(t, addr), socktest.Dial(t, addr), socktest.Dial(t, addr)
	connOf(t, s, pub)
	connOf(t, s, a)
	connOf(t, s, b)
	// listening waits until c listens on exactly scopes (sorted) besides
	// introspection, which a client that announced participants wants.
	listening := func(c *sockclient.ClientConn, scopes ...string) {
		t.Helper()
		id := connOf(t, s, c)
		scopes = append([]string{IntrospectionScope.String()}, scopes...)
		testutil.WaitFor(t, socktest.Timeout, "the interest", func() bool {
			for _, info := range s.Connections() {
				if info.ID != id || info.Interest.All || len(info.Interest.Scopes) != len(scopes) {
					continue
				}
				for i, sc := range info.Interest.Scopes {
					if sc.String() != scopes[i] {
						return false
					}
				}
				return true
			}
			return false
		})
	}
	frame := func(sc string, seq uint32) []byte {
		return socktest.Notification(t, sc, "bytes", []byte{byte(seq)}, seq)
	}
	expect := func(c *sockclient.ClientConn, who string, want []byte) {
		t.Helper()
		if got := recvEvent(t, c); !bytes.Equal(got, want) {
			t.Fatalf("%s got the wrong frame (% x), want % x", who, got, want)
		}
	}

	socktest.Send(t, a, socktest.Hello(t, socktest.UUID(1), "listener", "/x/"))
	socktest.Send(t, b, socktest.Hello(t, socktest.UUID(2), "listener", "/z/"))
	listening(a, "/x/")
	listening(b, "/z/")
	for seq := range uint32(3) { // remembered after the first
		f := frame("/x/", seq)
		socktest.Send(t, pub, f)
		expect(a, "a", f)
	}

	socktest.Send(t, b, socktest.Hello(t, socktest.UUID(3), "listener", "/x/"))
	listening(b, "/x/", "/z/")
	f := frame("/x/", 3)
	socktest.Send(t, pub, f)
	expect(a, "a", f)
	expect(b, "b, which listens since the last frame,", f)

	socktest.Send(t, a, socktest.Hello(t, socktest.UUID(4), "listener", "/y/"))
	socktest.Send(t, a, socktest.Bye(t, socktest.UUID(1)))
	listening(a, "/y/")
	fx, fy := frame("/x/", 4), frame("/y/", 5)
	socktest.Send(t, pub, fx)
	socktest.Send(t, pub, fy)
	expect(b, "b", fx)
	expect(a, "a, which no longer listens on /x/,", fy)
}

// TestListenerKeepsNoRoute: a connection whose client announced its
// listener (a Hello forwarded to the other clients) and publishes nothing
// else keeps no forwarding state; one that publishes a stream keeps its
// route.
func TestListenerKeepsNoRoute(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	pub, a, b := socktest.Dial(t, addr), socktest.Dial(t, addr), socktest.Dial(t, addr)
	socktest.Send(t, a, socktest.Hello(t, socktest.UUID(1), "listener", "/x/"))
	socktest.Send(t, b, socktest.Hello(t, socktest.UUID(2), "listener", "/x/"))
	expect := func(c *sockclient.ClientConn, want []byte) {
		t.Helper()
		if got := recvEvent(t, c); !bytes.Equal(got, want) {
			t.Fatalf("got % x, want % x", got, want)
		}
	}
	// Once both Hellos were forwarded (each to the other listener), a
	// frame on /x/ reaches both.
	testutil.WaitFor(t, socktest.Timeout, "both listeners", func() bool {
		n := 0
		for _, c := range s.Connections() {
			if !c.Interest.All && len(c.Interest.Scopes) == 2 {
				n++
			}
		}
		return n == 2
	})
	f := socktest.Notification(t, "/x/", "bytes", []byte{1}, 1)
	socktest.Send(t, pub, f)
	expect(a, f)
	expect(b, f)
	connsOf := func(cs ...*sockclient.ClientConn) []*conn {
		var out []*conn
		for _, c := range cs {
			id := connOf(t, s, c)
			s.mu.Lock()
			out = append(out, s.conns[id])
			s.mu.Unlock()
		}
		return out
	}
	cs := connsOf(a, b, pub)
	// Each reader's state is read once it has ended: a reader ends by
	// taking its connection out of the server's table under the lock.
	for _, c := range []*sockclient.ClientConn{a, b, pub} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, socktest.Timeout, "the connections to end", func() bool { return len(s.Connections()) == 0 })
	if cs[0].fw != nil || cs[1].fw != nil {
		t.Fatal("a listener that only announced itself keeps forwarding state")
	}
	if fw := cs[2].fw; fw == nil || fw.gen == 0 || string(fw.scope) != "/x/" {
		t.Fatalf("the publisher's route is not remembered: %+v", fw)
	}
}

// TestDeliverToRouteFollowsInterest: a DeliverBatch remembers the targets
// of its last scope too, for the same index only: a listener that comes
// between two frames on one scope gets the second, and two servers, whose
// indexes are numbered apart, never take each other's targets.
func TestDeliverToRouteFollowsInterest(t *testing.T) {
	s1, addr1 := startServer(t, quietConfig(), nil)
	s2, addr2 := startServer(t, quietConfig(), nil)
	// The two servers see the same changes, so that numbers of their own
	// would be equal.
	a, b, c, d := socktest.Dial(t, addr1), socktest.Dial(t, addr1), socktest.Dial(t, addr2), socktest.Dial(t, addr2)
	socktest.Send(t, a, socktest.Hello(t, socktest.UUID(1), "listener", "/x/"))
	socktest.Send(t, b, socktest.Hello(t, socktest.UUID(2), "listener", "/z/"))
	socktest.Send(t, c, socktest.Hello(t, socktest.UUID(3), "listener", "/x/"))
	socktest.Send(t, d, socktest.Hello(t, socktest.UUID(5), "listener", "/z/"))
	interested := func(s *Server, n int) {
		t.Helper()
		testutil.WaitFor(t, socktest.Timeout, "the interests", func() bool {
			k := 0
			for _, info := range s.Connections() {
				if !info.Interest.All && len(info.Interest.Scopes) > 0 {
					k++
				}
			}
			return k == n
		})
	}
	interested(s1, 2)
	interested(s2, 2)
	var batch DeliverBatch
	deliver := func(s *Server, f []byte, want int) {
		t.Helper()
		if n := s.DeliverTo(&batch, f, scope.MustParse("/x/"), 0); n != want {
			t.Fatalf("DeliverTo queued to %d connections, want %d", n, want)
		}
		batch.Flush()
	}
	expect := func(c *sockclient.ClientConn, who string, want []byte) {
		t.Helper()
		if got := recvEvent(t, c); !bytes.Equal(got, want) {
			t.Fatalf("%s got % x, want % x", who, got, want)
		}
	}
	f0, f1, f2 := socktest.Notification(t, "/x/", "bytes", []byte{0}, 0), socktest.Notification(t, "/x/", "bytes", []byte{1}, 1), socktest.Notification(t, "/x/", "bytes", []byte{2}, 2)
	deliver(s1, f0, 1)
	deliver(s2, f1, 1) // the other server's index, with the same scope
	expect(a, "a", f0)
	expect(c, "c, on the other server,", f1)

	socktest.Send(t, b, socktest.Hello(t, socktest.UUID(4), "listener", "/x/"))
	testutil.WaitFor(t, socktest.Timeout, "b to listen on /x/", func() bool {
		for _, info := range s1.Connections() {
			if len(info.Interest.Scopes) == 3 {
				return true
			}
		}
		return false
	})
	deliver(s1, f2, 2)
	expect(a, "a", f2)
	expect(b, "b, which listens since the last frame,", f2)
}
