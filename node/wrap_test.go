package node

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// TestWrapFrameInPlace: a frame the socket server read with wholeRoom is
// wrapped in place into exactly AppendWhole's bytes, across the sizes
// where the length prefix grows (1, 2 and 3 bytes of varint), and the body
// the frame shares with the connections it was relayed to is unchanged.
func TestWrapFrameInPlace(t *testing.T) {
	type wrapped struct{ body, rec []byte }
	got := make(chan wrapped, 16)
	srv, err := rsbsocket.NewServer(rsbsocket.Config{FrameRoom: wholeRoom}, rsbsocket.HandlerFunc(func(_ rsbsocket.ConnID, f frame.Frame) {
		body := bytes.Clone(f.Body)
		got <- wrapped{body: body, rec: wrapFrame(&f)}
	}))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := sockclient.Dial(ctx, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, size := range []int{0, 60, 70, 16000, 16400, 59000} {
		body, err := notification.Marshal(testutil.Event("/wrap/", uint32(size), make([]byte, size)))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Send(body); err != nil {
			t.Fatal(err)
		}
		select {
		case w := <-got:
			if !bytes.Equal(w.body, body) || !bytes.Equal(w.rec, fragmentation.AppendWhole(nil, body)) {
				t.Fatalf("%d-byte body: record of %d bytes differs from AppendWhole's %d", len(body), len(w.rec), fragmentation.WholeSize(len(body)))
			}
		case <-ctx.Done():
			t.Fatal("frame not handled")
		}
	}
}
