package rsbsocket

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/spinpay"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
)

// foreignConn hides a client's *net.TCPConn, so that the client is not
// recorded as one of this process's own (ownClients) and the server
// treats it as a client in another process.
type foreignConn struct{ net.Conn }

// CloseWrite shuts down the sending side, for ClientConn's orderly Close.
func (f foreignConn) CloseWrite() error { return f.Conn.(*net.TCPConn).CloseWrite() }

// dialForeign is dial for a client the server must take for another
// process's.
func dialForeign(t testing.TB, addr string) *sockclient.ClientConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), socktest.Timeout)
	defer cancel()
	c, err := sockclient.NewClientConn(ctx, foreignConn{nc}, sockclient.ClientConfig{CloseTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// pingPongThrough runs n round trips between two clients of s, dialled by
// dialer: the pinger sends a frame, the ponger echoes each frame it gets,
// and the echo (which the server forwards to the pinger, every connection
// wanting everything) is the pong.
func pingPongThrough(t *testing.T, s *Server, addr string, dialer func(testing.TB, string) *sockclient.ClientConn, n int) {
	t.Helper()
	before := len(s.Connections())
	ping, pong := dialer(t, addr), dialer(t, addr)
	// Unix socket clients are unnamed, so connOf cannot tell them apart:
	// wait for the server to list both.
	testutil.WaitFor(t, socktest.Timeout, "both connections", func() bool { return len(s.Connections()) == before+2 })
	body := socktest.Notification(t, "/pp/", "bytes", []byte("ping"), 0)
	for i := range n {
		socktest.Send(t, ping, body)
		got := socktest.Recv(t, pong)
		socktest.Send(t, pong, got)
		if back := socktest.Recv(t, ping); !bytes.Equal(back, body) {
			t.Fatalf("round trip %d: pong differs", i)
		}
	}
}

// TestAwaitAnswer: in a request/reply exchange through the server between
// clients of other processes, a reader that relayed a frame to a
// connection which has been answering polls for the answer (SpinWaits)
// and sees it come (SpinHits); with SpinWait negative no reader ever
// polls.
func TestAwaitAnswer(t *testing.T) {
	// Every poll runs to its answer, however the loaded host or the race
	// detector spaces its checks.
	t.Cleanup(spinpay.IgnorePreemption())
	for _, c := range []struct {
		name string
		spin time.Duration
		want bool
	}{
		// The longest wait, so that a slow test machine still answers
		// within it and readers learn that it does.
		{"polls", MaxSpinWait, true},
		{"never", -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := quietConfig()
			cfg.SpinWait = c.spin
			s, addr := startServer(t, cfg, nil)
			pingPongThrough(t, s, addr, dialForeign, 50)
			st := s.Stats()
			noDrops(t, st)
			if !c.want {
				if st.SpinWaits != 0 || st.SpinHits != 0 {
					t.Fatalf("SpinWait %v: %d polls, %d hits; want none", c.spin, st.SpinWaits, st.SpinHits)
				}
				return
			}
			if st.SpinWaits == 0 || st.SpinHits == 0 || st.SpinHits > st.SpinWaits {
				t.Fatalf("%d polls, %d hits; want some of each, hits at most polls", st.SpinWaits, st.SpinHits)
			}
		})
	}
}

// TestAwaitAnswerNotForOwnClients: clients of the server's own process,
// over TCP or a Unix socket, never make a reader poll: they answer on the
// threads the poll would hold.
func TestAwaitAnswerNotForOwnClients(t *testing.T) {
	cfg := quietConfig()
	cfg.SpinWait = MaxSpinWait
	s, tcpAddr := startServer(t, cfg, nil)
	path := filepath.Join(t.TempDir(), "rsbd.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	for _, addr := range []string{tcpAddr, sockclient.UnixPrefix + path} {
		pingPongThrough(t, s, addr, socktest.Dial, 50)
		if st := s.Stats(); st.SpinWaits != 0 {
			t.Fatalf("%s: %d polls for clients of this process", addr, st.SpinWaits)
		}
	}
}

// TestAwaitAnswerNotForStreams: frames relayed one at a time to a
// subscriber that never sends make no reader poll, however long
// SpinWait is.
func TestAwaitAnswerNotForStreams(t *testing.T) {
	cfg := quietConfig()
	cfg.SpinWait = MaxSpinWait
	s, addr := startServer(t, cfg, nil)
	relayEach(t, s, dialForeign(t, addr), dialForeign(t, addr), 300)
	if st := s.Stats(); st.SpinWaits != 0 {
		t.Fatalf("%d polls for a subscriber that never answers", st.SpinWaits)
	}
}

// TestNoteAnswer: a frame soon after a relay counts as an answer, up to
// answersMax; a late one resets the count; a frame with no relay before it
// leaves the count alone.
func TestNoteAnswer(t *testing.T) {
	c := &conn{srv: &Server{cfg: Config{SpinWait: time.Hour}}}
	c.noteAnswer()
	if got := c.answers.Load(); got != 0 {
		t.Fatalf("answers %d without a relay", got)
	}
	for i := range answersMax + 2 {
		c.relayed()
		c.noteAnswer()
		if got, want := c.answers.Load(), int32(min(i+1, answersMax)); got != want {
			t.Fatalf("after %d answers: count %d, want %d", i+1, got, want)
		}
		if got, want := c.srv.answering.Load(), int32(min(1, (i+1)/answersMin)); got != want {
			t.Fatalf("after %d answers: the server counts %d answering, want %d", i+1, got, want)
		}
	}
	c.noteAnswer() // no relay since the last answer
	if got := c.answers.Load(); got != answersMax {
		t.Fatalf("a frame without a relay changed the count to %d", got)
	}
	c.relayedAt.Store(monoNow() - int64(2*time.Hour))
	c.noteAnswer()
	if got := c.answers.Load(); got != 0 {
		t.Fatalf("a late answer left the count at %d", got)
	}
	if got := c.srv.answering.Load(); got != 0 {
		t.Fatalf("the server still counts %d answering after a late answer", got)
	}
	c.stopAnswering() // a connection ending with nothing counted
	if got := c.srv.answering.Load(); got != 0 {
		t.Fatalf("stopAnswering of a silent connection made the count %d", got)
	}
}

// TestConfigSpinWaitBound: Validate refuses a SpinWait above MaxSpinWait.
func TestConfigSpinWaitBound(t *testing.T) {
	if err := (Config{SpinWait: MaxSpinWait}).Validate(); err != nil {
		t.Fatalf("MaxSpinWait refused: %v", err)
	}
	if err := (Config{SpinWait: MaxSpinWait + 1}).Validate(); err == nil {
		t.Fatal("SpinWait above MaxSpinWait accepted")
	}
}

// rrPair is a request/reply conversation through a server: ping listens on
// /rr/<k>/pong/, pong on /rr/<k>/ping/, each announced with a Hello, so
// that each frame goes to one connection.
type rrPair struct {
	ping, pong *sockclient.ClientConn
	k          int
	req, rep   []byte
}

// newPair dials the two clients of conversation k (foreign ones) and waits
// until the server routes both scopes.
func newPair(t *testing.T, s *Server, addr string, k int) *rrPair {
	t.Helper()
	p := &rrPair{ping: dialForeign(t, addr), pong: dialForeign(t, addr), k: k}
	pingSc, pongSc := fmt.Sprintf("/rr/%d/ping/", k), fmt.Sprintf("/rr/%d/pong/", k)
	socktest.Send(t, p.ping, socktest.Hello(t, socktest.UUID(byte(2*k)), "listener", pongSc))
	socktest.Send(t, p.pong, socktest.Hello(t, socktest.UUID(byte(2*k+1)), "listener", pingSc))
	// A connection that announced nothing yet gets every event (and makes
	// Wanted true): wait until both Hellos are learnt, each scope routed to
	// its connection alone.
	testutil.WaitFor(t, socktest.Timeout, "both scopes routed", func() bool {
		ix := s.index.Load()
		_, ping := ix.by[scope.MustParse(pingSc).String()]
		_, pong := ix.by[scope.MustParse(pongSc).String()]
		return ping && pong // the two connections, and so out of ix.all
	})
	p.req = socktest.Notification(t, pingSc, "bytes", []byte("request"), 0)
	p.rep = socktest.Notification(t, pongSc, "bytes", []byte("reply"), 0)
	return p
}

// roundTrips runs n requests and their replies.
func (p *rrPair) roundTrips(t *testing.T, n int) {
	t.Helper()
	for range n {
		socktest.Send(t, p.ping, p.req)
		recvScope(t, p.pong, fmt.Sprintf("/rr/%d/ping/", p.k))
		socktest.Send(t, p.pong, p.rep)
		recvScope(t, p.ping, fmt.Sprintf("/rr/%d/pong/", p.k))
	}
}

// recvScope reads frames until one on scope want, skipping introspection
// (the other clients' Hellos).
func recvScope(t *testing.T, c *sockclient.ClientConn, want string) {
	t.Helper()
	for {
		f, err := frame.ParseFrame(socktest.Recv(t, c))
		if err != nil {
			t.Fatal(err)
		}
		switch sc := f.Scope.String(); {
		case sc == want:
			return
		case !strings.HasPrefix(sc, IntrospectionScope.String()):
			t.Fatalf("frame on %s, want %s", sc, want)
		}
	}
}

// TestAwaitAnswerOneConversation: readers poll for answers while one
// request/reply conversation runs through the server, not while two do
// (they would take the clients' CPUs), and again once the second ended.
func TestAwaitAnswerOneConversation(t *testing.T) {
	cfg := quietConfig()
	cfg.SpinWait = MaxSpinWait
	s, addr := startServer(t, cfg, nil)
	one := newPair(t, s, addr, 1)
	// An answer later than SpinWait (a loaded machine) makes its
	// connection stop counting as answering for a while: each step runs
	// round trips until it sees what it waits for.
	testutil.WaitFor(t, socktest.Timeout, "a poll with one conversation", func() bool {
		one.roundTrips(t, 5)
		return s.Stats().SpinWaits > 0
	})
	two := newPair(t, s, addr, 2)
	testutil.WaitFor(t, socktest.Timeout, "four connections answering", func() bool {
		one.roundTrips(t, 2)
		two.roundTrips(t, 2)
		return s.answering.Load() == 4
	})
	testutil.WaitFor(t, socktest.Timeout, "round trips of both conversations without a poll", func() bool {
		before := s.Stats().SpinWaits
		one.roundTrips(t, 20)
		two.roundTrips(t, 20)
		return s.Stats().SpinWaits == before && s.answering.Load() == 4
	})
	_ = two.ping.Close()
	_ = two.pong.Close()
	testutil.WaitFor(t, socktest.Timeout, "the second conversation's connections gone", func() bool { return s.answering.Load() <= 2 })
	before := s.Stats().SpinWaits
	testutil.WaitFor(t, socktest.Timeout, "a poll once the second conversation ended", func() bool {
		one.roundTrips(t, 5)
		return s.Stats().SpinWaits > before
	})
}

// TestAwaitAnswerNotOverUnixSockets: a reader that relayed to a client in
// another process which has been answering polls for its answer over TCP,
// and not over a Unix socket (see spin.go).
func TestAwaitAnswerNotOverUnixSockets(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			cfg := quietConfig()
			cfg.SpinWait = time.Millisecond
			s, _ := startServer(t, cfg, nil)
			reader, answering := serverSide(t, s, network), serverSide(t, s, network)
			answering.answers.Store(answersMax)
			answering.peer.Store(peerElsewhere) // as if SO_PEERCRED named another process
			reader.awaitAnswer(&readState{}, answering)
			if polled, want := s.Stats().SpinWaits > 0, network == "tcp"; polled != want {
				t.Fatalf("%s: polled %v, want %v", network, polled, want)
			}
		})
	}
}

// serverSide returns the server's side of a fresh connection over network
// as a conn of s (not served), with what awaitAnswer looks at.
func serverSide(t *testing.T, s *Server, network string) *conn {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s.sock")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &conn{srv: s, nc: nc, remote: remoteOf(nc)}
	if c.raw, err = nc.(syscall.Conn).SyscallConn(); err != nil {
		t.Fatal(err)
	}
	return c
}
