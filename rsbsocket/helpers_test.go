package rsbsocket

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/proto/rsbpb"
	"github.com/rsbd/rsbd/proto/rsbpb/introspection"
	"github.com/rsbd/rsbd/proto/rsbpb/operatingsystem"
	"github.com/rsbd/rsbd/scope"
)

// testTimeout bounds every wait in the tests; generous for -race on a busy
// machine.
const testTimeout = 20 * time.Second

// pythonFrame is the 80-byte frame body a real rsb-python informer sent
// (reference capture): scope /example/sub/, utf-8-string "hello0", seq 0.
var pythonFrame = []byte("\x32\x0d/example/sub/\x3a\x0cutf-8-string\x4a\x06hello0" +
	"\x7a\x12\x10\xdc\xfa\xd7\x95\x8f\xaf\x98\x03\x18\x89\xfb\xd7\x95\x8f\xaf\x98\x03" +
	"\xe2\x06\x14\x0a\x10\x55\x86\xfd\x91\x90\x1f\x46\x58\x90\xe1\x25\xa8\xbf\xac\x52\x1a\x10\x00")

// pythonSender is the sender id inside pythonFrame.
var pythonSender = []byte("\x55\x86\xfd\x91\x90\x1f\x46\x58\x90\xe1\x25\xa8\xbf\xac\x52\x1a")

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

// dial connects a client that is closed when the test ends.
func dial(t testing.TB, addr string) *ClientConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := DialConfig(ctx, addr, ClientConfig{CloseTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// recv reads one frame within testTimeout.
func recv(t testing.TB, c *ClientConn) []byte {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(testTimeout)); err != nil {
		t.Fatal(err)
	}
	b, err := c.Recv()
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	return b
}

// send writes one frame or fails the test.
func send(t testing.TB, c *ClientConn, body []byte) {
	t.Helper()
	if err := c.Send(body); err != nil {
		t.Fatalf("Send: %v", err)
	}
}

// notification serializes a Notification on scope sc.
func notification(t testing.TB, sc, schema string, data []byte, seq uint32) []byte {
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

// uuidString formats 16 bytes as an RFC 4122 string.
func uuidString(id []byte) string {
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

// participantScope is the introspection scope of participant id.
func participantScope(id []byte) string {
	return ParticipantsScope.String() + uuidString(id) + "/"
}

// helloFrame is the introspection event announcing participant id.
func helloFrame(t testing.TB, id []byte, kind, sc string) []byte {
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
	return notification(t, participantScope(id), HelloWireSchema, data, 0)
}

// byeFrame is the introspection event removing participant id.
func byeFrame(t testing.TB, id []byte) []byte {
	t.Helper()
	data, err := proto.Marshal(&introspection.Bye{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	return notification(t, participantScope(id), ByeWireSchema, data, 1)
}

// uuid returns a test participant id.
func uuid(b byte) []byte { return bytes.Repeat([]byte{b}, 16) }

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
	f    Frame
}

func (r *recorder) OnFrame(conn ConnID, f Frame) {
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
	testutil.WaitFor(t, testTimeout, "OnDisconnect", func() bool {
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
func connOf(t testing.TB, s *Server, c *ClientConn) ConnID {
	t.Helper()
	var id ConnID
	testutil.WaitFor(t, testTimeout, "connection to be listed", func() bool {
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
func connIdle(t testing.TB, s *Server, c *ClientConn) ConnID {
	t.Helper()
	id := connOf(t, s, c)
	testutil.WaitFor(t, testTimeout, "the handshake's writer to let go", func() bool {
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

// bufioReader wraps r for ReadFrame.
func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }

// pythonFrameScope is the parsed scope of pythonFrame.
func pythonFrameScope(t testing.TB) scope.Scope {
	t.Helper()
	f, err := ParseFrame(pythonFrame)
	if err != nil {
		t.Fatal(err)
	}
	return f.Scope
}

// sendAll sends bodies as fast as the connection takes them, in batches of
// up to 128 frames or 64 KiB, as a client library buffers.
func sendAll(pub *ClientConn, bodies [][]byte) error {
	for len(bodies) > 0 {
		n, size := 0, 0
		for n < len(bodies) && n < 128 && size < 64<<10 {
			size += headerSize + len(bodies[n])
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
func relayEach(t *testing.T, s *Server, pub, sub *ClientConn, n int) {
	t.Helper()
	connOf(t, s, pub)
	connIdle(t, s, sub)
	for i, body := range bulkFrames(t, n, 64) {
		send(t, pub, body)
		if got := recv(t, sub); !bytes.Equal(got, body) {
			t.Fatalf("frame %d differs", i)
		}
	}
	testutil.WaitFor(t, testTimeout, "the last write counted", func() bool { return s.Stats().DirectWrites >= uint64(n) })
}
