package socktest

import (
	"context"
	"testing"
	"time"

	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// Dial connects a client that is closed when the test ends.
func Dial(t testing.TB, addr string) *sockclient.ClientConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	c, err := sockclient.DialConfig(ctx, addr, sockclient.ClientConfig{CloseTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Recv reads one frame within Timeout.
func Recv(t testing.TB, c *sockclient.ClientConn) []byte {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(Timeout)); err != nil {
		t.Fatal(err)
	}
	b, err := c.Recv()
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	return b
}

// Send writes one frame or fails the test.
func Send(t testing.TB, c *sockclient.ClientConn, body []byte) {
	t.Helper()
	if err := c.Send(body); err != nil {
		t.Fatalf("Send: %v", err)
	}
}
