package sockclient_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// fakeServer accepts one connection and runs serve on it.
func fakeServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		serve(nc)
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return ln.Addr().String()
}

func TestDialBadHandshake(t *testing.T) {
	tests := []struct {
		name  string
		greet []byte
	}{
		{"non-zero", []byte{0, 0, 0, 1}},
		{"frame instead", frame.AppendFrame(nil, socktest.PythonFrame)},
		{"short", []byte{0, 0}},
		{"nothing", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := fakeServer(t, func(nc net.Conn) { _, _ = nc.Write(tt.greet) })
			ctx, cancel := context.WithTimeout(context.Background(), socktest.Timeout)
			defer cancel()
			c, err := sockclient.Dial(ctx, addr)
			if !errors.Is(err, frame.ErrBadHandshake) || c != nil {
				t.Fatalf("Dial = %v, %v; want ErrBadHandshake", c, err)
			}
		})
	}
}

func TestDialHandshakeTimeout(t *testing.T) {
	release := make(chan struct{})
	addr := fakeServer(t, func(net.Conn) { <-release })
	defer close(release)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), socktest.Timeout)
	defer cancel()
	_, err := sockclient.DialConfig(ctx, addr, sockclient.ClientConfig{HandshakeTimeout: 50 * time.Millisecond})
	if !errors.Is(err, frame.ErrBadHandshake) || time.Since(start) > socktest.Timeout/2 {
		t.Fatalf("Dial = %v after %v", err, time.Since(start))
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	go cancel2()
	if _, err := sockclient.Dial(ctx2, addr); err == nil {
		t.Fatal("Dial succeeded with a cancelled context")
	}
}

func TestClientFramesFollowingHandshake(t *testing.T) {
	// A server that sends the greeting and two frames in one write.
	greeting := append([]byte{0, 0, 0, 0}, frame.AppendFrame(frame.AppendFrame(nil, socktest.PythonFrame), []byte("x"))...)
	got := make(chan []byte, 1)
	addr := fakeServer(t, func(nc net.Conn) {
		_, _ = nc.Write(greeting)
		body, _ := frame.ReadFrame(bufio.NewReader(nc), 0, nil)
		got <- body
		_ = nc.(*net.TCPConn).CloseWrite()
		_, _ = io.Copy(io.Discard, nc)
	})
	c := socktest.Dial(t, addr)
	if b := socktest.Recv(t, c); !bytes.Equal(b, socktest.PythonFrame) {
		t.Fatalf("first frame % x", b)
	}
	if b := socktest.Recv(t, c); string(b) != "x" {
		t.Fatalf("second frame % x", b)
	}
	socktest.Send(t, c, socktest.PythonFrame)
	if b := <-got; !bytes.Equal(b, socktest.PythonFrame) {
		t.Fatalf("server got % x", b)
	}
	if _, err := c.Recv(); err != io.EOF {
		t.Fatalf("Recv after server EOF = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(socktest.PythonFrame); !errors.Is(err, sockclient.ErrClosed) {
		t.Fatalf("Send after Close = %v", err)
	}
}

func TestClientCloseWaitsForServerEOF(t *testing.T) {
	sawEOF := make(chan struct{})
	addr := fakeServer(t, func(nc net.Conn) {
		_ = frame.WriteHandshake(nc)
		// Answer the client's EOF with two more frames and our own EOF.
		_, _ = io.Copy(io.Discard, nc)
		close(sawEOF)
		_, _ = nc.Write(frame.AppendFrame(frame.AppendFrame(nil, socktest.PythonFrame), socktest.PythonFrame))
		_ = nc.(*net.TCPConn).CloseWrite()
	})
	c := socktest.Dial(t, addr)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sawEOF:
	default:
		t.Fatal("Close returned before the server saw EOF")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestClientConfigValidate(t *testing.T) {
	if err := (sockclient.ClientConfig{}).Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []sockclient.ClientConfig{{MaxFrameSize: -1}, {CloseTimeout: -1}, {HandshakeTimeout: -1}} {
		if err := c.Validate(); !errors.Is(err, sockclient.ErrInvalidConfig) {
			t.Errorf("Validate(%+v) = %v", c, err)
		}
		if _, err := sockclient.DialConfig(context.Background(), "127.0.0.1:1", c); !errors.Is(err, sockclient.ErrInvalidConfig) {
			t.Errorf("DialConfig(%+v) = %v", c, err)
		}
	}
}

// TestClientTrySend: TrySend writes a frame at once while the socket takes
// it, never waits when it does not, takes nothing while it owes the rest
// of a frame it began, and the next SendMany finishes that frame first:
// the server reads every taken frame whole and in order.
func TestClientTrySend(t *testing.T) {
	start := make(chan struct{})
	got := make(chan [][]byte, 1)
	addr := fakeServer(t, func(nc net.Conn) {
		_ = nc.(*net.TCPConn).SetReadBuffer(4096)
		if frame.WriteHandshake(nc) != nil {
			return
		}
		<-start // read nothing until told
		r := bufio.NewReader(nc)
		var frames [][]byte
		for {
			body, err := frame.ReadFrame(r, 0, nil)
			if err != nil {
				got <- frames
				return
			}
			frames = append(frames, body)
		}
	})
	c := socktest.Dial(t, addr)
	_ = c.NetConn().(*net.TCPConn).SetWriteBuffer(4096)
	var sent [][]byte
	small := []byte("first")
	if taken, owes, err := c.TrySend(small); err != nil || !taken || owes {
		t.Fatalf("TrySend on an idle connection: taken %v, owes %v, %v", taken, owes, err)
	}
	sent = append(sent, small)
	owed := false
	for i := 0; !owed; i++ {
		if i == 1000 {
			t.Fatal("1000 frames of 64 KiB taken by a server that reads nothing")
		}
		body := bytes.Repeat([]byte{byte(i)}, 64<<10)
		taken, owes, err := c.TrySend(body)
		if err != nil {
			t.Fatal(err)
		}
		if taken {
			sent = append(sent, body)
		}
		owed = owes
		if !taken && !owes {
			break // the socket took nothing of it: full at a frame's end
		}
	}
	t.Logf("%d frames taken, the last owed: %v", len(sent), owed)
	if owed {
		if taken, _, _ := c.TrySend(small); taken {
			t.Fatal("TrySend took a frame while it owed the rest of another")
		}
	}
	close(start)
	last := []byte("last")
	if err := c.SendMany([][]byte{last}); err != nil {
		t.Fatal(err)
	}
	sent = append(sent, last)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	frames := <-got
	if len(frames) != len(sent) {
		t.Fatalf("server read %d frames, want %d", len(frames), len(sent))
	}
	for i := range sent {
		if !bytes.Equal(frames[i], sent[i]) {
			t.Fatalf("frame %d differs", i)
		}
	}
}

// TestClientRecvIntoBuffered: a frame whose bytes came with an earlier
// frame's read is reported buffered, the first of a read is not.
func TestClientRecvIntoBuffered(t *testing.T) {
	next := make(chan struct{})
	addr := fakeServer(t, func(nc net.Conn) {
		if frame.WriteHandshake(nc) != nil {
			return
		}
		// Once the client read the handshake: two frames in one write,
		// then a third after the client read them.
		<-next
		if _, err := nc.Write(frame.AppendFrame(frame.AppendFrame(nil, []byte("one")), []byte("two"))); err != nil {
			return
		}
		<-next
		_, _ = nc.Write(frame.AppendFrame(nil, []byte("three")))
		<-next
	})
	c := socktest.Dial(t, addr)
	defer close(next)
	next <- struct{}{}
	for i, want := range []struct {
		body     string
		buffered bool
	}{{"one", false}, {"two", true}} {
		body, buffered, err := c.RecvIntoBuffered(nil)
		if err != nil || string(body) != want.body || buffered != want.buffered {
			t.Fatalf("frame %d: %q, buffered %v, %v; want %q, %v", i, body, buffered, err, want.body, want.buffered)
		}
	}
	next <- struct{}{}
	if body, buffered, err := c.RecvIntoBuffered(nil); err != nil || string(body) != "three" || buffered {
		t.Fatalf("frame 2: %q, buffered %v, %v; want \"three\", false", body, buffered, err)
	}
}

// TestClientReady: RecvIntoSized reports a whole next frame waiting in
// the buffer, and not a frame of which only a part has arrived.
func TestClientReady(t *testing.T) {
	next := make(chan struct{})
	third := frame.AppendFrame(nil, []byte("three"))
	addr := fakeServer(t, func(nc net.Conn) {
		if frame.WriteHandshake(nc) != nil {
			return
		}
		// Two frames and the start of a third in one write, then the
		// rest of the third once the client read the first two.
		<-next
		b := frame.AppendFrame(frame.AppendFrame(nil, []byte("one")), []byte("two"))
		if _, err := nc.Write(append(b, third[:frame.HeaderSize+2]...)); err != nil {
			return
		}
		<-next
		_, _ = nc.Write(third[frame.HeaderSize+2:])
		<-next
	})
	c := socktest.Dial(t, addr)
	defer close(next)
	next <- struct{}{}
	for i, want := range []struct {
		body  string
		ready bool
	}{{"one", true}, {"two", false}} {
		body, _, more, err := c.RecvIntoSized(nil, nil)
		if err != nil || string(body) != want.body || more != want.ready {
			t.Fatalf("frame %d: %q, %v, ready %v; want %q, ready %v", i, body, err, more, want.body, want.ready)
		}
	}
	next <- struct{}{}
	if body, _, more, err := c.RecvIntoSized(nil, nil); err != nil || string(body) != "three" || more {
		t.Fatalf("frame 2: %q, %v, ready %v", body, err, more)
	}
}

// TestSplitAddr: "unix:" names a socket path, anything else a TCP address.
func TestSplitAddr(t *testing.T) {
	for _, c := range []struct{ in, network, addr string }{
		{"127.0.0.1:55555", "tcp", "127.0.0.1:55555"},
		{"localhost:1", "tcp", "localhost:1"},
		{"unix:/run/rsbd.sock", "unix", "/run/rsbd.sock"},
		{"unix:rel/x.sock", "unix", "rel/x.sock"},
		{"unix:", "unix", ""},
	} {
		if n, a := sockclient.SplitAddr(c.in); n != c.network || a != c.addr {
			t.Errorf("SplitAddr(%q) = %q, %q; want %q, %q", c.in, n, a, c.network, c.addr)
		}
	}
}
