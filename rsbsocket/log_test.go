package rsbsocket

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/internal/syncbuf"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
)

// TestConnLogger: a connection's messages carry its id and remote address;
// a connection with nothing to log at the server's level builds no logger.
func TestConnLogger(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelWarn} {
		var out syncbuf.Buffer
		cfg := Config{Logger: slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: level}))}
		srv, addr := startServer(t, cfg, nil)
		c := socktest.Dial(t, addr)
		if err := c.Send(socktest.Hello(t, uuid16(1), "listener", "/log/")); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, socktest.Timeout, "the Hello", func() bool { return srv.Stats().FramesIn == 1 })
		srv.mu.Lock()
		var built bool
		for _, sc := range srv.conns {
			built = sc.log.Load() != nil
		}
		srv.mu.Unlock()
		if level == slog.LevelDebug {
			testutil.WaitFor(t, socktest.Timeout, "the connect message", func() bool { return strings.Contains(out.String(), "client connected") })
			line := out.String()
			if !strings.Contains(line, "conn=") || !strings.Contains(line, "remote=127.0.0.1:") {
				t.Fatalf("connect message without the connection's attributes:\n%s", line)
			}
			if !built {
				t.Fatal("no logger after a debug message")
			}
		} else if built || out.String() != "" {
			t.Fatalf("level %v: logger built %v, output %q", level, built, out.String())
		}
	}
}
