package rsbsocket

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
)

// greetGate holds the first write on a connection (the greeting) until
// it is opened; started is closed when that write begins. fail makes the
// write fail instead.
type greetGate struct {
	started, release chan struct{}
	fail             bool
	once             sync.Once
}

// newGate returns a gate that is opened when the test ends at the latest,
// so that a failing test does not leave the server's goroutine blocked.
func newGate(t *testing.T, fail bool) *greetGate {
	g := &greetGate{started: make(chan struct{}), release: make(chan struct{}), fail: fail}
	t.Cleanup(g.open)
	return g
}

// open lets the held write go on.
func (g *greetGate) open() { g.once.Do(func() { close(g.release) }) }

// gatedListener applies the next gate, if one is set, to the next accepted
// connection.
type gatedListener struct {
	net.Listener
	next atomic.Pointer[greetGate]
}

func (l *gatedListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nc, err
	}
	if g := l.next.Swap(nil); g != nil {
		return &gatedConn{Conn: nc, gate: g}, nil
	}
	return nc, nil
}

// gatedConn is a connection whose first write waits for its gate.
type gatedConn struct {
	net.Conn
	gate   *greetGate
	passed bool // written by the server's greeting only
}

func (c *gatedConn) Write(p []byte) (int, error) {
	if !c.passed {
		c.passed = true
		close(c.gate.started)
		<-c.gate.release
		if c.gate.fail {
			return 0, errors.New("greeting refused by the test")
		}
	}
	return c.Conn.Write(p)
}

// startGatedServer serves cfg on a gated listener until the test ends.
func startGatedServer(t *testing.T, h Handler) (*Server, string, *gatedListener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gl := &gatedListener{Listener: ln}
	s, addr := serveOn(t, quietConfig(), h, gl)
	return s, addr, gl
}

// awaitGate waits until the gated greeting write has begun.
func awaitGate(t *testing.T, g *greetGate) {
	t.Helper()
	select {
	case <-g.started:
	case <-time.After(socktest.Timeout):
		t.Fatal("the server never began its greeting")
	}
}

// A frame for a client that arrives while the server is still writing its
// greeting reaches the client right after the greeting: the connection is
// routed before the greeting, and its frames queue behind it. Both paths
// are checked: Deliver (frames from the network) and forward (frames of
// another client).
func TestFramesDuringGreeting(t *testing.T) {
	rec := &recorder{}
	s, addr, gl := startGatedServer(t, rec)
	pub := socktest.Dial(t, addr)
	pubID := connOf(t, s, pub)

	g := newGate(t, false)
	gl.next.Store(g)
	dialed := make(chan *sockclient.ClientConn, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), socktest.Timeout)
		defer cancel()
		c, err := sockclient.DialConfig(ctx, addr, sockclient.ClientConfig{CloseTimeout: time.Second})
		if err != nil {
			t.Errorf("dial: %v", err)
		}
		dialed <- c
	}()
	awaitGate(t, g)
	testutil.WaitFor(t, socktest.Timeout, "the greeted connection to be routed", func() bool { return len(s.Connections()) == 2 })

	fromNet := socktest.Notification(t, "/greet/net/", "bytes", []byte("from the network"), 1)
	if n := s.Deliver(fromNet, scope.MustParse("/greet/net/"), pubID); n != 1 {
		t.Fatalf("Deliver queued to %d connections, want 1 (the one being greeted)", n)
	}
	fromPub := socktest.Notification(t, "/greet/pub/", "bytes", []byte("from a client"), 2)
	socktest.Send(t, pub, fromPub)
	testutil.WaitFor(t, socktest.Timeout, "the client's frame to be forwarded", func() bool { return len(rec.snapshot()) == 1 })
	g.open()

	sub := <-dialed
	if sub == nil {
		t.FailNow()
	}
	t.Cleanup(func() { _ = sub.Close() })
	for i, want := range [][]byte{fromNet, fromPub} {
		if got := socktest.Recv(t, sub); !bytes.Equal(got, want) {
			t.Fatalf("frame %d after the greeting differs: got %d bytes, want %d", i, len(got), len(want))
		}
	}
	if st := s.Stats(); st.Drops != [NumDropReasons]uint64{} {
		t.Fatalf("drops %v, want none", st.Drops)
	}
}

// A connection whose greeting fails is removed, reported to the observer
// as connected and then disconnected, and the frames queued for it while
// it was being greeted are counted as dropped: closed.
func TestGreetingFails(t *testing.T) {
	rec := &recorder{}
	s, addr, gl := startGatedServer(t, rec)
	g := newGate(t, true)
	gl.next.Store(g)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	awaitGate(t, g)
	testutil.WaitFor(t, socktest.Timeout, "the connection to be routed", func() bool { return len(s.Connections()) == 1 })
	id := s.Connections()[0].ID
	frame := socktest.Notification(t, "/greet/", "bytes", []byte("x"), 1)
	if n := s.Deliver(frame, scope.MustParse("/greet/"), 0); n != 1 {
		t.Fatalf("Deliver queued to %d connections, want 1", n)
	}
	g.open()

	if reason := rec.waitDisconnect(t, id); reason != DisconnectWriteError {
		t.Fatalf("disconnect reason %v, want %v", reason, DisconnectWriteError)
	}
	st := s.Stats()
	if st.Drops[DropHandshake] != 1 || st.Drops[DropClosed] != 1 {
		t.Fatalf("drops: handshake %d, closed %d; want 1 and 1", st.Drops[DropHandshake], st.Drops[DropClosed])
	}
	if len(s.Connections()) != 0 {
		t.Fatalf("%d connections still routed", len(s.Connections()))
	}
}
