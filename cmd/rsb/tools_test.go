package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

// invoker runs a tool: in-process (run) or as an rsb process.
type invoker func(ctx context.Context, stdin string, args ...string) result

// cluster is two daemons' socket URIs and a way to connect a Go client.
type cluster struct {
	uris [2]string
	tool invoker
}

// forClusters runs fn on two in-process nodes with the tools run
// in-process, and (not with -short) on two rsbd processes with the rsb
// binary.
func forClusters(t *testing.T, fn func(t *testing.T, c cluster)) {
	t.Run("in-process", func(t *testing.T) {
		nodes := clienttest.StartNodes(t, 2)
		fn(t, cluster{uris: [2]string{"socket://" + nodes[0].SocketAddr().String(), "socket://" + nodes[1].SocketAddr().String()},
			tool: runTool})
	})
	t.Run("rsbd", func(t *testing.T) {
		if testing.Short() {
			t.Skip("rsbd processes are not started with -short")
		}
		ds := clienttest.StartDaemons(t, 2)
		bin := testutil.Build(t, "github.com/rsbd/rsbd/cmd/rsb")
		fn(t, cluster{uris: [2]string{ds[0].URI(), ds[1].URI()}, tool: processInvoker(bin)})
	})
}

// loggerThenSend starts the logger (which must stop by itself) and runs
// send every 100 ms until the logger exits: the logger's interest needs a
// moment to reach the sending daemon.
func loggerThenSend(t *testing.T, tool invoker, logger []string, send []string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg(), 30*time.Second)
	defer cancel()
	done := make(chan result, 1)
	go func() { done <- tool(ctx, "", logger...) }()
	for {
		if r := tool(ctx, "", send...); r.code != exitOK {
			t.Fatalf("send failed (%d): %s", r.code, r.stderr)
		}
		select {
		case r := <-done:
			if r.code != exitOK {
				t.Fatalf("logger failed (%d): %s", r.code, r.stderr)
			}
			return r
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("logger printed nothing within 30s")
		}
	}
}

// TestSendToLogger sends on one daemon and logs on the other in each style.
func TestSendToLogger(t *testing.T) {
	forClusters(t, func(t *testing.T, c cluster) {
		for _, style := range []string{"detailed", "compact", "payload", "json"} {
			t.Run(style, func(t *testing.T) {
				sc := "/tools/" + style
				r := loggerThenSend(t, c.tool,
					[]string{"logger", "--style", style, "--stop-after", "1", "--filter", "method M", c.uris[1] + sc},
					[]string{"send", "--method", "M", "-D", "k=v", `"hello logger"`, c.uris[0] + sc + "/sub"})
				checkStyle(t, style, r.stdout, sc+"/sub/")
			})
		}
	})
}

// checkStyle checks one logged event in style.
func checkStyle(t *testing.T, style, out, sc string) {
	t.Helper()
	var want []string
	switch style {
	case "detailed":
		want = []string{"Event\n", "  Scope         " + sc + "\n", "  Method        M\n", "  Wire schema   utf-8-string\n",
			"Meta-data\n  k             v\n", "Payload: string, 12 bytes\n  hello logger\n", strings.Repeat("-", separatorWidth) + "\n"}
	case "compact":
		want = []string{" " + sc + " M utf-8-string ", ` 12 "hello logger"` + "\n"}
		if strings.Count(out, "\n") != 1 {
			t.Errorf("compact printed %d lines", strings.Count(out, "\n"))
		}
	case "payload":
		if out != "hello logger\n" {
			t.Errorf("payload style printed %q", out)
		}
	case "json":
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil || m["payload"] != "hello logger" || m["scope"] != sc ||
			m["method"] != "M" || m["meta_data"].(map[string]any)["k"] != "v" {
			t.Errorf("json style printed %q (%v)", out, err)
		}
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s output lacks %q:\n%s", style, w, out)
		}
	}
}

// TestSendSpecs sends several event specs and logs them as JSON.
func TestSendSpecs(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	uri := "socket://" + nodes[0].SocketAddr().String()
	for _, tc := range []struct {
		spec, stdin string
		schema      string
		payload     any
	}{
		{"", "", "void", nil},
		{"true", "", "bool", true},
		{"-12", "", "int64", -12.0},
		{"2.5", "", "double", 2.5},
		{"/a/b", "", "scope", "/a/b/"},
		{"-", "line\n", "utf-8-string", "line\n"},
		{"-:binary", "\x00\x01", "bytes", "AAE="},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			sc := "/specs/" + tc.schema
			r := loggerThenSend(t, func(ctx context.Context, stdin string, args ...string) result {
				if args[0] == "send" {
					stdin = tc.stdin
				}
				return runTool(ctx, stdin, args...)
			}, []string{"logger", "-s", "json", "--stop-after", "1", uri + sc}, []string{"send", tc.spec, uri + sc})
			var m map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
				t.Fatal(err)
			}
			if m["wire_schema"] != tc.schema || m["payload"] != tc.payload {
				t.Errorf("logged %s %#v, want %s %#v", m["wire_schema"], m["payload"], tc.schema, tc.payload)
			}
		})
	}
}

// TestCall calls a server in the test process through the tool on the
// server's daemon: result, remote error, timeout, --no-wait.
func TestCall(t *testing.T) {
	forClusters(t, func(t *testing.T, c cluster) {
		var calls atomic.Int64
		startServer(t, dialClient(t, c.uris[1]), "/tools/svc", &calls)
		uri := c.uris[1]
		r := c.tool(bg(), "", "call", uri+`/tools/svc/echo("hi there")`)
		if r.code != exitOK || r.stdout != "hi there\n" {
			t.Fatalf("echo: code %d out %q err %q", r.code, r.stdout, r.stderr)
		}
		r = c.tool(bg(), "", "call", "-t", "5s", uri+"/tools/svc/square(12)")
		if r.code != exitOK || r.stdout != "144\n" {
			t.Fatalf("square: code %d out %q err %q", r.code, r.stdout, r.stderr)
		}
		r = c.tool(bg(), "", "call", uri+"/tools/svc/fail()")
		if r.code != exitFailure || r.stdout != "" || !strings.Contains(r.stderr, "remote error") ||
			!strings.Contains(r.stderr, "it went wrong") {
			t.Fatalf("fail: code %d out %q err %q", r.code, r.stdout, r.stderr)
		}
		r = c.tool(bg(), "", "call", "--timeout", "200ms", c.uris[0]+"/tools/nobody/m()")
		if r.code != exitTimeout || !strings.Contains(r.stderr, "no reply") {
			t.Fatalf("timeout: code %d err %q", r.code, r.stderr)
		}
		before := calls.Load()
		if r := c.tool(bg(), "", "call", "--no-wait", uri+"/tools/svc/echo(1)"); r.code != exitOK || r.stdout != "" {
			t.Fatalf("--no-wait: code %d out %q err %q", r.code, r.stdout, r.stderr)
		}
		testutil.WaitFor(t, 10*time.Second, "the --no-wait request", func() bool { return calls.Load() > before })
	})
}

// TestCallAcrossDaemons calls a server attached to the other daemon once
// routes both ways are established: a result and a remote error.
func TestCallAcrossDaemons(t *testing.T) {
	forClusters(t, func(t *testing.T, c cluster) {
		var calls atomic.Int64
		startServer(t, dialClient(t, c.uris[1]), "/tools/far", &calls)
		keepRoute(t, c.uris[0], c.uris[1], "/tools/far")
		keepRoute(t, c.uris[1], c.uris[0], "/tools/far")
		if r := callAcross(t, c, c.uris[0]+"/tools/far/square(-4)"); r.code != exitOK || r.stdout != "16\n" {
			t.Fatalf("square: code %d out %q err %q", r.code, r.stdout, r.stderr)
		}
		if r := callAcross(t, c, c.uris[0]+"/tools/far/fail()"); r.code != exitFailure || !strings.Contains(r.stderr, "it went wrong") {
			t.Fatalf("fail: code %d err %q", r.code, r.stderr)
		}
	})
}

// callAcross runs rsb call, again when it times out (up to 5 attempts): a
// one-shot caller changes its daemon's interest as it connects, and rsbd can
// lose a reply around such a change (see the report). The attempts are logged.
func callAcross(t *testing.T, c cluster, spec string) result {
	t.Helper()
	for attempt := 1; ; attempt++ {
		r := c.tool(bg(), "", "call", "-t", "3s", spec)
		if r.code != exitTimeout || attempt == 5 {
			t.Logf("%s: answered at attempt %d", spec, attempt)
			return r
		}
	}
}

// dialClient connects a Go client for the test.
func dialClient(t *testing.T, uri string) *client.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg(), 10*time.Second)
	defer cancel()
	b, err := client.Dial(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// keepRoute makes sure events on sc published through daemon from reach
// daemon to, and keeps it so for the test: a Go client on to holds a reader
// on sc while one on from publishes probes until the reader gets one.
func keepRoute(t *testing.T, from, to, sc string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg(), 20*time.Second)
	defer cancel()
	rb, pb := dialClient(t, to), dialClient(t, from)
	rd, err := rb.NewReader(scope.MustParse(sc))
	if err != nil {
		t.Fatal(err)
	}
	// The publishing client listens too, so that its daemon never sees a
	// connection wanting everything come and go.
	if _, err := pb.NewReader(scope.MustParse(sc)); err != nil {
		t.Fatal(err)
	}
	inf, err := pb.NewInformer(scope.MustParse(sc))
	if err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil {
		ev := &client.Event{}
		ev.Method = "PROBE"
		if err := inf.PublishEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
		wait, stop := context.WithTimeout(ctx, 100*time.Millisecond)
		_, err := rd.Read(wait)
		stop()
		if err == nil {
			return
		}
	}
	t.Fatalf("no route for %s", sc)
}

// startServer serves echo, square and fail on sc.
func startServer(t *testing.T, b *client.Bus, sc string, calls *atomic.Int64) {
	t.Helper()
	ls, err := b.NewLocalServer(scope.MustParse(sc))
	if err != nil {
		t.Fatal(err)
	}
	ls.AddMethod("echo", func(_ context.Context, req *client.Event) (any, error) {
		calls.Add(1)
		return req.Payload, nil
	})
	ls.AddMethod("square", func(_ context.Context, req *client.Event) (any, error) {
		n, _ := req.Payload.(int64)
		return n * n, nil
	})
	ls.AddMethod("fail", func(context.Context, *client.Event) (any, error) {
		return nil, errors.New("it went wrong")
	})
}
