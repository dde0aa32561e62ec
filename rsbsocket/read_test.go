package rsbsocket

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"slices"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
)

// rawPair returns the server side of a loopback TCP connection as a conn
// with its raw connection, and the client side.
func rawPair(t *testing.T) (*conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	raw, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return &conn{nc: nc, raw: raw}, client
}

// waitReturns runs waitReadable and reports whether it returned within d.
func waitReturns(c *conn, d time.Duration) bool {
	done := make(chan struct{})
	go func() { c.waitReadable(peekReady(new([1]byte))); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// TestWaitReadable: waitReadable returns at once for data the socket
// already holds (however it got there), waits while there is none, and
// returns when data comes, when the peer closes and when the connection is
// closed under it; it never consumes data.
func TestWaitReadable(t *testing.T) {
	t.Run("data already there", func(t *testing.T) {
		c, client := rawPair(t)
		if _, err := client.Write([]byte("abc")); err != nil {
			t.Fatal(err)
		}
		// Read part of it, so that the poller's readiness is spent while
		// the socket still holds data.
		buf := make([]byte, 1)
		testutil.WaitFor(t, socktest.Timeout, "the data", func() bool { return waitReturns(c, time.Second) })
		if _, err := c.nc.Read(buf); err != nil {
			t.Fatal(err)
		}
		if !waitReturns(c, 5*time.Second) {
			t.Fatal("waited with two bytes in the socket")
		}
		rest := make([]byte, 2)
		if _, err := c.nc.Read(rest); err != nil || string(rest) != "bc" {
			t.Fatalf("read %q, %v after the wait; want bc", rest, err)
		}
	})
	t.Run("waits, then data", func(t *testing.T) {
		c, client := rawPair(t)
		done := make(chan struct{})
		go func() { c.waitReadable(peekReady(new([1]byte))); close(done) }()
		select {
		case <-done:
			t.Fatal("returned without data")
		case <-time.After(50 * time.Millisecond): // it must still be waiting
		}
		if _, err := client.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("not woken by data")
		}
	})
	t.Run("peer closes", func(t *testing.T) {
		c, client := rawPair(t)
		_ = client.Close()
		if !waitReturns(c, 10*time.Second) {
			t.Fatal("not woken by the peer's close")
		}
	})
	t.Run("closed under it", func(t *testing.T) {
		c, _ := rawPair(t)
		done := make(chan struct{})
		go func() { c.waitReadable(peekReady(new([1]byte))); close(done) }()
		_ = c.nc.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("not woken by Close")
		}
	})
}

// framewiseReader returns one frame, or what its Read asks of it, per Read.
type framewiseReader struct{ frames [][]byte }

func (f *framewiseReader) Read(p []byte) (int, error) {
	if len(f.frames) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.frames[0])
	if f.frames[0] = f.frames[0][n:]; len(f.frames[0]) == 0 {
		f.frames = f.frames[1:]
	}
	return n, nil
}

// TestConnReaderGrows: a connection's reader starts with a small buffer,
// moves to a large one after readUpgradeBytes of small frames, whether the
// small buffer is empty then or not, and loses no byte on the way.
func TestConnReaderGrows(t *testing.T) {
	var bodies, frames [][]byte
	for i, small := 0, 0; small < 2*readUpgradeBytes; i++ {
		body := bytes.Repeat([]byte{byte(i)}, 90+i%50)
		if i%100 == 7 {
			body = bytes.Repeat([]byte{byte(i)}, readBufferSize) // large: not counted
		} else {
			small += frame.HeaderSize + len(body)
		}
		bodies = append(bodies, body)
		frames = append(frames, frame.AppendFrame(nil, body))
	}
	sources := map[string]func() io.Reader{
		"stream":      func() io.Reader { return bytes.NewReader(bytes.Join(frames, nil)) },
		"frame-wise":  func() io.Reader { return &framewiseReader{frames: slices.Clone(frames)} },
		"odd-chunked": func() io.Reader { return iotest.HalfReader(bytes.NewReader(bytes.Join(frames, nil))) },
	}
	for name, source := range sources {
		t.Run(name, func(t *testing.T) {
			src := source()
			cr := connReader{src: src, r: bufio.NewReaderSize(src, readBufferMin)}
			rm := frame.Room{Head: 6, Tail: 4}
			for i, want := range bodies {
				got, room, err := cr.next(0, rm)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("frame %d: %d bytes, %v", i, len(got), err)
				}
				if len(room) != rm.Head+len(want)+rm.Tail || !bytes.Equal(room[rm.Head:rm.Head+len(want)], want) || cap(got) != len(got) {
					t.Fatalf("frame %d: room of %d bytes around a body of %d (cap %d)", i, len(room), len(want), cap(got))
				}
			}
			if _, _, err := cr.next(0, rm); err != io.EOF {
				t.Fatalf("after the last frame: %v", err)
			}
			if cr.small >= 0 || cr.r.Size() != readBufferSize {
				t.Fatalf("reader did not grow: small %d, size %d", cr.small, cr.r.Size())
			}
		})
	}
}

// TestServerFrameScopeSharesSmallBodies: the Server's reader gives a small
// frame a Scope in its Body's memory (no allocation of its own) and a
// larger frame a Scope of its own, so that a kept scope keeps little alive.
func TestServerFrameScopeSharesSmallBodies(t *testing.T) {
	var r recorder
	_, addr := startServer(t, quietConfig(), &r)
	c := socktest.Dial(t, addr)
	small := socktest.Notification(t, "/share/small/", "bytes", []byte("x"), 1)
	large := socktest.Notification(t, "/share/large/", "bytes", make([]byte, frame.SharedScopeMax), 2)
	if len(small) > frame.SharedScopeMax || len(large) <= frame.SharedScopeMax {
		t.Fatalf("frames of %d and %d bytes around %d", len(small), len(large), frame.SharedScopeMax)
	}
	socktest.Send(t, c, small)
	socktest.Send(t, c, large)
	testutil.WaitFor(t, socktest.Timeout, "both frames", func() bool { return len(r.snapshot()) == 2 })
	for i, want := range []bool{true, false} {
		f := r.snapshot()[i].f
		if got := socktest.Inside(f.Scope.String(), f.Body); got != want {
			t.Errorf("frame of %d bytes, scope %v: shares its body %v, want %v", len(f.Body), f.Scope, got, want)
		}
	}
}
