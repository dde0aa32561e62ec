package rsbsocket

import (
	"bytes"
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// dialSlow connects a client with a tiny receive buffer that never reads,
// so the server's writer for it blocks soon.
func dialSlow(t *testing.T, addr string) *sockclient.ClientConn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	ctx, cancel := context.WithTimeout(context.Background(), socktest.Timeout)
	defer cancel()
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sockclient.NewClientConn(ctx, nc, sockclient.ClientConfig{CloseTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// slowClientRun publishes 64 KiB frames until stop reports true, while a
// fast subscriber reads everything; it returns the frames published. The
// fast subscriber must receive every one of them.
func slowClientRun(t *testing.T, s *Server, addr string, stop func() bool) int {
	t.Helper()
	slow := dialSlow(t, addr)
	pub, fast := socktest.Dial(t, addr), socktest.Dial(t, addr)
	connOf(t, s, slow)
	connOf(t, s, pub)
	connOf(t, s, fast)

	received := make(chan []byte, 16)
	go func() {
		defer close(received)
		for {
			_ = fast.SetReadDeadline(time.Now().Add(socktest.Timeout))
			b, err := fast.Recv()
			if err != nil {
				return
			}
			received <- b
		}
	}()
	const maxFrames = 2000 // 125 MiB: far more than socket buffers and queue hold
	payload := bytes.Repeat([]byte{'x'}, 64<<10)
	sent := 0
	for ; sent < maxFrames && !stop(); sent++ {
		body := socktest.Notification(t, "/bulk/", "bytes", payload, uint32(sent))
		socktest.Send(t, pub, body)
		// Each frame reaches the fast subscriber promptly, whatever the
		// slow one does.
		select {
		case got := <-received:
			if !bytes.Equal(got, body) {
				t.Fatalf("fast subscriber got a different frame %d", sent)
			}
		case <-time.After(socktest.Timeout):
			t.Fatalf("fast subscriber stalled at frame %d", sent)
		}
	}
	if sent == maxFrames {
		t.Fatalf("slow client never overflowed; stats %+v", s.Stats())
	}
	return sent
}

func TestSlowClientDropNewest(t *testing.T) {
	cfg := quietConfig()
	cfg.QueueFrames = 8
	cfg.WriteTimeout = time.Minute
	s, addr := startServer(t, cfg, nil)
	sent := slowClientRun(t, s, addr, func() bool { return s.Stats().Drops[DropQueueFull] > 0 })
	st := s.Stats()
	if st.ConnsCurrent != 3 || st.Disconnects != [NumDisconnectReasons]uint64{} || st.Stalls != 1 {
		t.Fatalf("slow client was disconnected under DropNewest: %+v", st)
	}
	for _, ci := range s.Connections() {
		if ci.QueueFrames > cfg.QueueFrames {
			t.Fatalf("queue of connection %d holds %d frames, bound %d", ci.ID, ci.QueueFrames, cfg.QueueFrames)
		}
	}
	t.Logf("queue overflowed after %d frames of 64 KiB", sent)
}

func TestSlowClientDisconnect(t *testing.T) {
	cfg := quietConfig()
	cfg.QueueFrames = 8
	cfg.WriteTimeout = time.Minute
	cfg.SlowClientPolicy = SlowClientDisconnect
	s, addr := startServer(t, cfg, nil)
	slowClientRun(t, s, addr, func() bool { return s.Stats().Disconnects[DisconnectSlowClient] > 0 })
	st := s.Stats()
	if st.Drops[DropQueueFull] == 0 || st.ConnsCurrent != 2 || st.Stalls != 1 {
		t.Fatalf("stats %+v", st)
	}
	// The fast subscriber's writer may still be returning from its last write.
	testutil.WaitFor(t, socktest.Timeout, "queues to drain", func() bool { frames, _ := s.QueueDepth(); return frames == 0 })
}

func TestSlowClientWriteTimeout(t *testing.T) {
	cfg := quietConfig()
	cfg.QueueFrames = 8
	cfg.WriteTimeout = 50 * time.Millisecond
	s, addr := startServer(t, cfg, nil)
	slowClientRun(t, s, addr, func() bool { return s.Stats().Disconnects[DisconnectTimeout] > 0 })
	if st := s.Stats(); st.Drops[DropTimeout] == 0 || st.ConnsCurrent != 2 {
		t.Fatalf("stats %+v", st)
	}
}
