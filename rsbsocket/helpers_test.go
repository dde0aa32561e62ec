package rsbsocket

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"sync"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
)

// quietConfig returns a server config that logs nothing.
func quietConfig() Config {
	return Config{Logger: slog.New(slog.DiscardHandler)}
}

// startServer serves cfg on 127.0.0.1:0 until the test ends.
func startServer(t testing.TB, cfg Config, h Handler) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, cfg, h, ln)
}

// startSmallBufServer is startServer with a 4 KiB kernel send buffer on
// every accepted connection, so that the server's queue for a client that
// does not read fills after a few frames.
func startSmallBufServer(t testing.TB, cfg Config, h Handler) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, cfg, h, smallBufListener{ln})
}

// smallBufListener gives accepted connections a small send buffer.
type smallBufListener struct{ net.Listener }

func (l smallBufListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return nc, err
}

// serveOn serves cfg on ln until the test ends.
func serveOn(t testing.TB, cfg Config, h Handler, ln net.Listener) (*Server, string) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quietConfig().Logger
	}
	s, err := NewServer(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		_ = s.Close()
		if err := <-served; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return s, ln.Addr().String()
}

// recorder is a Handler that records frames and connection events.
type recorder struct {
	mu          sync.Mutex
	frames      []recorded
	connects    []ConnID
	disconnects map[ConnID]DisconnectReason
	changes     int
}

type recorded struct {
	conn ConnID
	f    frame.Frame
}

func (r *recorder) OnFrame(conn ConnID, f frame.Frame) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frames = append(r.frames, recorded{conn, f})
}

func (r *recorder) OnConnect(conn ConnID, _ net.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.connects = append(r.connects, conn)
}

func (r *recorder) OnDisconnect(conn ConnID, reason DisconnectReason) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.disconnects == nil {
		r.disconnects = make(map[ConnID]DisconnectReason)
	}
	r.disconnects[conn] = reason
}

func (r *recorder) OnInterestChanged() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes++
}

// waitDisconnect waits for OnDisconnect of conn and returns its reason.
func (r *recorder) waitDisconnect(t testing.TB, conn ConnID) DisconnectReason {
	t.Helper()
	var reason DisconnectReason
	testutil.WaitFor(t, socktest.Timeout, "OnDisconnect", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		var ok bool
		reason, ok = r.disconnects[conn]
		return ok
	})
	return reason
}

// snapshot copies the recorded frames.
func (r *recorder) snapshot() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.frames...)
}

// connOf returns the server's id of the connection whose client is c.
func connOf(t testing.TB, s *Server, c *sockclient.ClientConn) ConnID {
	t.Helper()
	var id ConnID
	testutil.WaitFor(t, socktest.Timeout, "connection to be listed", func() bool {
		for _, ci := range s.Connections() {
			if ci.Remote.String() == c.LocalAddr().String() {
				id = ci.ID
				return true
			}
		}
		return false
	})
	return id
}

// connIdle returns c's connection id once the server has let go of its
// queue after the handshake: until then a frame queued to it is written by
// the writer the handshake starts, not by the one who queued it.
func connIdle(t testing.TB, s *Server, c *sockclient.ClientConn) ConnID {
	t.Helper()
	id := connOf(t, s, c)
	testutil.WaitFor(t, socktest.Timeout, "the handshake's writer to let go", func() bool {
		s.mu.Lock()
		sc := s.conns[id]
		s.mu.Unlock()
		if sc == nil {
			return false
		}
		sc.q.mu.Lock()
		defer sc.q.mu.Unlock()
		return !sc.q.owned
	})
	return id
}

// pythonFrameScope is the parsed scope of pythonFrame.
func pythonFrameScope(t testing.TB) scope.Scope {
	t.Helper()
	f, err := frame.ParseFrame(socktest.PythonFrame)
	if err != nil {
		t.Fatal(err)
	}
	return f.Scope
}

// sendAll sends bodies as fast as the connection takes them, in batches of
// up to 128 frames or 64 KiB, as a client library buffers.
func sendAll(pub *sockclient.ClientConn, bodies [][]byte) error {
	for len(bodies) > 0 {
		n, size := 0, 0
		for n < len(bodies) && n < 128 && size < 64<<10 {
			size += frame.HeaderSize + len(bodies[n])
			n++
		}
		if err := pub.SendMany(bodies[:n]); err != nil {
			return err
		}
		bodies = bodies[n:]
	}
	return nil
}

// relayEach sends n small frames from pub, one at a time, each read by sub
// before the next is sent, and waits until s has counted n direct writes
// (a write is counted once its system call returned, maybe after the
// subscriber read it).
func relayEach(t *testing.T, s *Server, pub, sub *sockclient.ClientConn, n int) {
	t.Helper()
	connOf(t, s, pub)
	connIdle(t, s, sub)
	for i, body := range bulkFrames(t, n, 64) {
		socktest.Send(t, pub, body)
		if got := socktest.Recv(t, sub); !bytes.Equal(got, body) {
			t.Fatalf("frame %d differs", i)
		}
	}
	testutil.WaitFor(t, socktest.Timeout, "the last write counted", func() bool { return s.Stats().DirectWrites >= uint64(n) })
}
