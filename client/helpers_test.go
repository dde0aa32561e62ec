package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/node"
	"github.com/rsbd/rsbd/scope"
)

// probeMethod marks the events awaitRoute publishes; collectors skip them.
const probeMethod = "PROBE"

// testLogger logs warnings (everything with -v).
func testLogger() *slog.Logger { return clienttest.Logger() }

func TestMain(m *testing.M) {
	code := m.Run()
	testutil.RemoveBinaries()
	os.Exit(code)
}

// env is one way of reaching a cluster: connect returns a new Bus on the
// cluster's i-th node, closed at the end of the test.
type env struct {
	name    string
	connect func(t testing.TB, i int) *Bus
}

// forEnvs runs fn against a fresh cluster of k members for every way a
// client reaches the bus: in-process nodes over the socket protocol (TCP and
// the Unix socket) and embedded, and rsbd daemon processes over the socket protocol (not with
// -short).
func forEnvs(t *testing.T, k int, fn func(t *testing.T, e env)) {
	t.Run("socket", func(t *testing.T) {
		nodes := clienttest.StartNodes(t, k)
		fn(t, env{name: "socket", connect: func(t testing.TB, i int) *Bus { return dialNode(t, nodes[i].SocketAddr().String()) }})
	})
	t.Run("unix", func(t *testing.T) {
		dir := t.TempDir()
		nodes := clienttest.StartNodesWith(t, k, func(i int, c *node.Config) {
			c.SocketPath = filepath.Join(dir, fmt.Sprintf("rsbd%d.sock", i))
		})
		fn(t, env{name: "unix", connect: func(t testing.TB, i int) *Bus { return dialNode(t, "socket:/?path="+nodes[i].SocketPath()) }})
	})
	t.Run("embedded", func(t *testing.T) {
		nodes := clienttest.StartNodes(t, k)
		fn(t, env{name: "embedded", connect: func(t testing.TB, i int) *Bus {
			b, err := EmbeddedConfig(nodes[i], Config{Logger: testLogger()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		}})
	})
	t.Run("rsbd", func(t *testing.T) {
		if testing.Short() {
			t.Skip("rsbd processes are not started with -short")
		}
		ds := clienttest.StartDaemons(t, k)
		fn(t, env{name: "rsbd", connect: func(t testing.TB, i int) *Bus { return dialNode(t, ds[i].URI()) }})
	})
}

// dialNode connects a Bus over the socket protocol.
func dialNode(t testing.TB, target string) *Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := DialConfig(ctx, target, Config{Logger: testLogger()})
	if err != nil {
		t.Fatalf("dial %s: %v", target, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// awaitRoute makes sure events on sc published on from reach to: it keeps
// a reader on sc open on to (so the interest stays) and publishes probes
// until one arrives. Create the participants under test afterwards.
func awaitRoute(t testing.TB, from, to *Bus, sc scope.Scope) {
	t.Helper()
	awaitRouteReader(t, from, to, sc)
}

// awaitRouteReader is awaitRoute returning its reader, for a caller that
// closes it once its own participants hold the interest: an open reader
// takes (and, once full, drops) every later event.
func awaitRouteReader(t testing.TB, from, to *Bus, sc scope.Scope) *Reader {
	t.Helper()
	rd, err := to.NewReader(sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	inf, err := from.NewInformer(sc)
	if err != nil {
		t.Fatal(err)
	}
	defer inf.Close()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ev := &Event{}
		ev.Method = probeMethod
		if err := inf.PublishEvent(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := rd.Read(ctx)
		cancel()
		if err == nil {
			return rd
		}
		if !errors.Is(err, ErrTimeout) {
			t.Fatal(err)
		}
	}
	t.Fatalf("no route for %s", sc)
	return nil
}

// collectEvents adds a handler to l that forwards every non-probe event.
func collectEvents(t testing.TB, l *Listener) <-chan *Event {
	t.Helper()
	ch := make(chan *Event, 256)
	l.AddHandler(func(ev *Event) error {
		if ev.Method != probeMethod {
			ch <- ev
		}
		return nil
	})
	return ch
}

// next returns the next event of ch or fails after a generous timeout.
func next(t testing.TB, ch <-chan *Event) *Event {
	t.Helper()
	return receive(t, ch)
}

// receive returns the next value of ch or fails after a generous timeout.
func receive[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing within 10s")
		var zero T
		return zero
	}
}

// quiet asserts that nothing is waiting on ch (used after a marker event has
// shown that what was sent before it has been handled).
func quiet(t testing.TB, ch <-chan *Event) {
	t.Helper()
	select {
	case ev := <-ch:
		t.Fatalf("unexpected event on %s: %v", ev.Scope, ev.Payload)
	default:
	}
}

// readSkippingProbes reads the next non-probe event.
func readSkippingProbes(t testing.TB, rd *Reader, timeout time.Duration) *Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		ev, err := rd.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if ev.Method != probeMethod {
			return ev
		}
	}
}

func mustScope(s string) scope.Scope { return scope.MustParse(s) }

func bg() context.Context { return context.Background() }
