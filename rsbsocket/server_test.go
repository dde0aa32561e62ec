package rsbsocket

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
)

func TestServerHandshakeBytesAndFrameLayout(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_ = raw.SetReadDeadline(time.Now().Add(socktest.Timeout))
	got := make([]byte, 4)
	if _, err := io.ReadFull(raw, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte{0, 0, 0, 0}) {
		t.Fatalf("handshake = % x, want 00 00 00 00", got)
	}
	testutil.WaitFor(t, socktest.Timeout, "raw connection to be routed", func() bool { return len(s.Connections()) == 1 })

	// The next bytes are exactly one frame relayed from another client.
	pub := socktest.Dial(t, addr)
	socktest.Send(t, pub, socktest.PythonFrame)
	want := frame.AppendFrame(nil, socktest.PythonFrame)
	got = make([]byte, len(want))
	if _, err := io.ReadFull(raw, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("relayed bytes differ:\n got % x\nwant % x", got, want)
	}
}

func TestServerRelaysByteIdenticalWithoutEcho(t *testing.T) {
	rec := &recorder{}
	s, addr := startServer(t, quietConfig(), rec)
	a, b := socktest.Dial(t, addr), socktest.Dial(t, addr)
	idA := connOf(t, s, a)
	connOf(t, s, b)

	socktest.Send(t, a, socktest.PythonFrame)
	if got := socktest.Recv(t, b); !bytes.Equal(got, socktest.PythonFrame) {
		t.Fatalf("b received % x", got)
	}
	// A's next frame must be b's marker: its own frame was not echoed.
	marker := socktest.Notification(t, "/marker/", "utf-8-string", []byte("m"), 0)
	socktest.Send(t, b, marker)
	if got := socktest.Recv(t, a); !bytes.Equal(got, marker) {
		t.Fatalf("a received % x, want the marker", got)
	}
	// The handler runs after the relay, so it may still be busy; the two
	// readers call it each on its own goroutine, in either order.
	testutil.WaitFor(t, socktest.Timeout, "handler", func() bool { return len(rec.snapshot()) == 2 })
	frames := rec.snapshot()
	if frames[0].conn != idA {
		frames[0], frames[1] = frames[1], frames[0]
	}
	if frames[0].conn != idA || !bytes.Equal(frames[0].f.Body, socktest.PythonFrame) ||
		frames[0].f.Scope.String() != "/example/sub/" || !bytes.Equal(frames[1].f.Body, marker) {
		t.Fatalf("handler saw %+v", frames)
	}
	// The writer counts a frame after its write returns, which may be after
	// the peer has read it.
	testutil.WaitFor(t, socktest.Timeout, "frames out", func() bool { return s.Stats().FramesOut == 2 })
	st := s.Stats()
	if st.FramesIn != 2 || st.BytesIn != uint64(len(socktest.PythonFrame)+len(marker)) ||
		st.BytesOut != st.BytesIn || st.QueueFrames != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestServerDeliverFromNode(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	a, b := socktest.Dial(t, addr), socktest.Dial(t, addr)
	idA := connOf(t, s, a)
	connOf(t, s, b)
	if n := s.Deliver(socktest.PythonFrame, scope.MustParse("/example/sub/"), 0); n != 2 {
		t.Fatalf("Deliver reached %d connections, want 2", n)
	}
	if n := s.Deliver(socktest.PythonFrame, scope.MustParse("/example/sub/"), idA); n != 1 {
		t.Fatalf("Deliver except a reached %d connections, want 1", n)
	}
	for _, c := range []*sockclient.ClientConn{a, b, b} {
		if got := socktest.Recv(t, c); !bytes.Equal(got, socktest.PythonFrame) {
			t.Fatalf("received % x", got)
		}
	}
}

func TestServerLearnsInterestFromHelloBye(t *testing.T) {
	rec := &recorder{}
	s, addr := startServer(t, quietConfig(), rec)
	lis, pub := socktest.Dial(t, addr), socktest.Dial(t, addr)
	idL := connOf(t, s, lis)
	connOf(t, s, pub)
	interestOf := func(id ConnID) Interest {
		for _, ci := range s.Connections() {
			if ci.ID == id {
				return ci.Interest
			}
		}
		return Interest{}
	}

	listenerID := socktest.UUID(0x42)
	socktest.Send(t, lis, socktest.Hello(t, listenerID, "listener", "/a/"))
	want := Interest{Scopes: scopes("/__rsb/introspection/", "/a/")}
	testutil.WaitFor(t, socktest.Timeout, "interest from Hello", func() bool { return sameInterest(interestOf(idL), want) })
	if in := s.Interest(); !in.All {
		t.Fatalf("union interest = %v, want all (pub announced nothing)", in)
	}

	onB := socktest.Notification(t, "/b/x/", "utf-8-string", []byte("b"), 1)
	onA := socktest.Notification(t, "/a/x/", "utf-8-string", []byte("a"), 2)
	survey := socktest.Notification(t, "/__rsb/introspection/participants/", "void", nil, 3)
	socktest.Send(t, pub, onB)
	socktest.Send(t, pub, onA)
	socktest.Send(t, pub, survey)
	// Frames of one publisher stay in order, so receiving onA first proves
	// that onB was not delivered.
	if got := socktest.Recv(t, lis); !bytes.Equal(got, onA) {
		t.Fatalf("listener received % x, want the /a/x/ frame", got)
	}
	if got := socktest.Recv(t, lis); !bytes.Equal(got, survey) {
		t.Fatalf("listener received % x, want the survey", got)
	}

	socktest.Send(t, lis, socktest.Bye(t, listenerID))
	testutil.WaitFor(t, socktest.Timeout, "interest after Bye", func() bool { return interestOf(idL).All })
	socktest.Send(t, pub, onB)
	if got := socktest.Recv(t, lis); !bytes.Equal(got, onB) {
		t.Fatalf("after Bye listener received % x, want the /b/x/ frame", got)
	}
	// Two connects, the Hello and the Bye changed the interest.
	testutil.WaitFor(t, socktest.Timeout, "interest change reports", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return rec.changes >= 4
	})
}

func TestServerInterestNoneByDefault(t *testing.T) {
	cfg := quietConfig()
	cfg.DefaultInterest = InterestNone
	s, addr := startServer(t, cfg, nil)
	lis, pub := socktest.Dial(t, addr), socktest.Dial(t, addr)
	connOf(t, s, lis)
	connOf(t, s, pub)
	if in := s.Interest(); in.All || len(in.Scopes) != 0 {
		t.Fatalf("interest with silent clients = %v, want none", in)
	}
	socktest.Send(t, lis, socktest.Hello(t, socktest.UUID(1), "listener", "/a/"))
	testutil.WaitFor(t, socktest.Timeout, "union interest", func() bool {
		return sameInterest(s.Interest(), Interest{Scopes: scopes("/__rsb/introspection/", "/a/")})
	})
	onA := socktest.Notification(t, "/a/", "utf-8-string", []byte("a"), 2)
	socktest.Send(t, pub, socktest.Notification(t, "/b/", "utf-8-string", []byte("b"), 1))
	socktest.Send(t, pub, onA)
	if got := socktest.Recv(t, lis); !bytes.Equal(got, onA) {
		t.Fatalf("listener received % x", got)
	}
}

func TestServerClosesBadConnections(t *testing.T) {
	tests := []struct {
		name   string
		bytes  []byte
		drop   DropReason
		reason DisconnectReason
	}{
		{"oversized", []byte{0x01, 0x04, 0, 0}, DropFrameTooLarge, DisconnectFrameTooLarge}, // 1025 > 1024
		{"garbage", frame.AppendFrame(nil, []byte("GET / HTTP/1.1\r\n\r\n")), DropMalformed, DisconnectMalformed},
		{"empty frame", []byte{0, 0, 0, 0}, DropMalformed, DisconnectMalformed},
		{"no scope", frame.AppendFrame(nil, []byte("\xe2\x06\x14\x0a\x10"+string(socktest.UUID(1))+"\x10\x00")), DropMalformed, DisconnectMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := quietConfig()
			cfg.MaxFrameSize = 1024
			rec := &recorder{}
			s, addr := startServer(t, cfg, rec)
			bad, good1, good2 := socktest.Dial(t, addr), socktest.Dial(t, addr), socktest.Dial(t, addr)
			idBad := connOf(t, s, bad)
			connOf(t, s, good1)
			connOf(t, s, good2)
			if _, err := bad.NetConn().Write(tt.bytes); err != nil {
				t.Fatal(err)
			}
			_ = bad.SetReadDeadline(time.Now().Add(socktest.Timeout))
			if _, err := bad.Recv(); err == nil {
				t.Fatal("bad client still connected")
			}
			testutil.WaitFor(t, socktest.Timeout, "disconnect to be counted", func() bool { return s.Stats().Disconnects[tt.reason] == 1 })
			if st := s.Stats(); st.Drops[tt.drop] != 1 || st.ConnsCurrent != 2 || st.FramesIn != 0 {
				t.Fatalf("stats %+v", st)
			}
			if got := rec.waitDisconnect(t, idBad); got != tt.reason {
				t.Fatalf("OnDisconnect reason %v, want %v", got, tt.reason)
			}
			// The server keeps serving: old and new clients still talk.
			socktest.Send(t, good1, socktest.PythonFrame)
			if got := socktest.Recv(t, good2); !bytes.Equal(got, socktest.PythonFrame) {
				t.Fatal("relay broken after a bad client")
			}
			late := socktest.Dial(t, addr)
			connOf(t, s, late)
			socktest.Send(t, late, socktest.PythonFrame)
			if got := socktest.Recv(t, good1); !bytes.Equal(got, socktest.PythonFrame) {
				t.Fatal("new client not served after a bad client")
			}
		})
	}
}

func TestServerOrderlyShutdown(t *testing.T) {
	rec := &recorder{}
	s, addr := startServer(t, quietConfig(), rec)
	clients := []*sockclient.ClientConn{socktest.Dial(t, addr), socktest.Dial(t, addr)}
	for _, c := range clients {
		connOf(t, s, c)
	}
	const queued = 50
	for range queued {
		s.Deliver(socktest.PythonFrame, scope.MustParse("/example/sub/"), 0)
	}
	// Each client reads everything, sees EOF, and closes its side.
	results := make(chan error, len(clients))
	for _, c := range clients {
		go func() {
			n := 0
			for {
				_ = c.SetReadDeadline(time.Now().Add(socktest.Timeout))
				_, err := c.Recv()
				if err == io.EOF {
					break
				}
				if err != nil {
					results <- err
					return
				}
				n++
			}
			if n != queued {
				results <- errors.New("frames lost in shutdown")
				return
			}
			results <- c.Close()
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), socktest.Timeout)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for range clients {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	st := s.Stats()
	if st.ConnsCurrent != 0 || st.Disconnects[DisconnectShutdown] != 2 || st.FramesOut != 2*queued {
		t.Fatalf("stats %+v", st)
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Fatal("still accepting after Shutdown")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close after Shutdown: %v", err)
	}
}

func TestServerShutdownDeadline(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	// A raw client that never answers the server's EOF.
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	testutil.WaitFor(t, socktest.Timeout, "connection", func() bool { return len(s.Connections()) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want deadline exceeded", err)
	}
	if st := s.Stats(); st.ConnsCurrent != 0 {
		t.Fatalf("%d connections left", st.ConnsCurrent)
	}
}

func TestServerClientEOFIsOrderly(t *testing.T) {
	rec := &recorder{}
	s, addr := startServer(t, quietConfig(), rec)
	c := socktest.Dial(t, addr)
	id := connOf(t, s, c)
	s.Deliver(socktest.PythonFrame, scope.Root, 0)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rec.waitDisconnect(t, id); got != DisconnectEOF {
		t.Fatalf("OnDisconnect reason %v, want eof", got)
	}
	if st := s.Stats(); st.Disconnects[DisconnectEOF] != 1 || st.FramesOut != 1 {
		t.Fatalf("stats %+v", st)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.connects) != 1 || rec.connects[0] != id {
		t.Fatalf("connects %v", rec.connects)
	}
}

func TestServerListenAndServe(t *testing.T) {
	cfg := quietConfig()
	cfg.Addr = "127.0.0.1:0"
	s, err := NewServer(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe(ctx) }()
	testutil.WaitFor(t, socktest.Timeout, "listener", func() bool { return s.Addr() != nil })
	c := socktest.Dial(t, s.Addr().String())
	go func() {
		for {
			if _, err := c.Recv(); err != nil {
				_ = c.Close()
				return
			}
		}
	}()
	connOf(t, s, c)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ListenAndServe = %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve after shutdown = %v", err)
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Serve after shutdown left its listener open: %v", err)
	}
}

func TestConfig(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	d := (Config{}).withDefaults()
	if d.Addr != ":55555" || d.MaxFrameSize != 64<<20 || d.QueueFrames != 1<<20 ||
		d.StallTimeout != 100*time.Millisecond || d.DefaultInterest != InterestAll {
		t.Fatalf("defaults %+v", d)
	}
	for _, c := range []Config{
		{MaxFrameSize: -1}, {MaxFrameSize: 1 << 33}, {QueueFrames: -1}, {QueueBytes: -1},
		{SlowClientPolicy: 7}, {DefaultInterest: 3}, {MaxParticipants: -1}, {MaxConnections: -1}, {WriteTimeout: -time.Second},
		{StallTimeout: -time.Second}, {FrameRoom: frame.Room{Head: -1}}, {FrameRoom: frame.Room{Tail: MaxFrameRoom + 1}},
	} {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("Validate(%+v) = %v", c, err)
		}
		if _, err := NewServer(c, nil); err == nil {
			t.Errorf("NewServer accepted %+v", c)
		}
	}
}

// TestServerWanted: Wanted follows the connections' interests.
func TestServerWanted(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	if s.Wanted(scope.MustParse("/a/")) {
		t.Fatal("wanted with no connection")
	}
	lis := socktest.Dial(t, addr)
	connOf(t, s, lis)
	if !s.Wanted(scope.MustParse("/any/")) {
		t.Fatal("a connection that announced nothing wants everything")
	}
	socktest.Send(t, lis, socktest.Hello(t, socktest.UUID(0x43), "listener", "/a/"))
	testutil.WaitFor(t, socktest.Timeout, "interest from Hello", func() bool { return !s.Wanted(scope.MustParse("/b/")) })
	if !s.Wanted(scope.MustParse("/a/x/")) || !s.Wanted(scope.MustParse("/a/")) {
		t.Fatal("listener's scope not wanted")
	}
}

// TestMaxConnections: past MaxConnections a connection is closed before
// the handshake and counted; once one closes, a new one is served.
func TestMaxConnections(t *testing.T) {
	cfg := quietConfig()
	cfg.MaxConnections = 2
	srv, addr := startServer(t, cfg, nil)
	first := socktest.Dial(t, addr)
	socktest.Dial(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), socktest.Timeout)
	defer cancel()
	if c, err := sockclient.Dial(ctx, addr); err == nil {
		_ = c.Close()
		t.Fatal("a third connection was served")
	} else if !errors.Is(err, frame.ErrBadHandshake) || !strings.Contains(err.Error(), "connection limit") {
		t.Fatalf("refused Dial: %v; want ErrBadHandshake naming the connection limit", err)
	}
	if st := srv.Stats(); st.ConnsRefused != 1 || st.ConnsCurrent != 2 {
		t.Fatalf("refused %d, current %d; want 1 and 2", st.ConnsRefused, st.ConnsCurrent)
	}
	_ = first.Close()
	testutil.WaitFor(t, socktest.Timeout, "the first connection gone", func() bool { return srv.Stats().ConnsCurrent == 1 })
	socktest.Dial(t, addr)
	if st := srv.Stats(); st.ConnsRefused != 1 || st.ConnsCurrent != 2 {
		t.Fatalf("after a close: refused %d, current %d; want 1 and 2", st.ConnsRefused, st.ConnsCurrent)
	}
}
