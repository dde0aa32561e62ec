package rsbsocket

import (
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
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
		testutil.WaitFor(t, testTimeout, "the data", func() bool { return waitReturns(c, time.Second) })
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
