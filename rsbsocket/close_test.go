package rsbsocket

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/leakcheck"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

// TestCloseLeavesNoGoroutines: a server with a publisher, a subscriber that
// reads and one that does not (a writer goroutine blocked on its socket,
// publishers waiting for its room) leaves no goroutine behind after Close,
// or after a Shutdown whose context ends while the stuck client still
// holds frames.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	for _, orderly := range []bool{false, true} {
		name := "close"
		if orderly {
			name = "shutdown"
		}
		t.Run(name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			cfg := quietConfig()
			cfg.QueueBytes = 1 << 20
			srv, addr := startSmallBufServer(t, cfg, HandlerFunc(func(ConnID, frame.Frame) {}))
			reader := socktest.Dial(t, addr)
			stuck := dialSlow(t, addr)
			pub := socktest.Dial(t, addr)
			testutil.WaitFor(t, socktest.Timeout, "connections routed", func() bool { return len(srv.Connections()) == 3 })
			body := socktest.Notification(t, "/c/", "bytes", bytes.Repeat([]byte("x"), 16<<10), 1)
			sc := scope.MustParse("/c/")
			testutil.WaitFor(t, socktest.Timeout, "the stuck client's backlog", func() bool {
				srv.Deliver(body, sc, 0)
				socktest.Recv(t, reader)
				return srv.BackloggedWithin(1 << 30)
			})
			for range 8 { // frames the publisher's reader forwards, waiting for room
				if err := pub.Send(body); err != nil {
					t.Fatal(err)
				}
			}
			if orderly {
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				defer cancel()
				_ = srv.Shutdown(ctx)
			} else {
				_ = srv.Close()
			}
			for _, c := range []*sockclient.ClientConn{reader, stuck, pub} {
				_ = c.Close()
			}
			leakcheck.Wait(t, before, 15*time.Second)
		})
	}
}
