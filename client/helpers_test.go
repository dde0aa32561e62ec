package client

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/node"
	"github.com/rsbd/rsbd/scope"
)

// probeMethod marks the events awaitRoute publishes; collectors skip them.
const probeMethod = "PROBE"

// testLogger logs warnings (everything with -v).
func testLogger() *slog.Logger {
	lvl := slog.LevelWarn
	if testing.Verbose() {
		lvl = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
}

// nodeConfig is a loopback node with ephemeral ports and a multicast pool
// private to the cluster, so parallel tests never hear each other.
func nodeConfig(pool group.Config) node.Config {
	return node.Config{
		SocketAddr:   "127.0.0.1:0",
		GossipAddr:   "127.0.0.1:0",
		DataAddr:     "127.0.0.1:0",
		LocalProfile: true,
		Group:        pool,
		Logger:       testLogger(),
	}
}

// privatePool returns a random multicast pool base and port.
func privatePool() group.Config {
	c := group.DefaultConfig()
	c.PoolBase = netip.AddrFrom4([4]byte{239, 255, byte(rand.IntN(200) + 20), 0})
	c.PoolPort = uint16(20000 + rand.IntN(30000))
	return c
}

// startCluster starts k joined nodes and waits until they see each other.
func startCluster(t testing.TB, k int) []*node.Node {
	t.Helper()
	pool := privatePool()
	var nodes []*node.Node
	for i := range k {
		c := nodeConfig(pool)
		if i > 0 {
			c.Join = []string{nodes[0].GossipAddr().String()}
		}
		n, err := node.New(c, nil)
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		t.Cleanup(func() { n.Close() })
		nodes = append(nodes, n)
	}
	waitFor(t, 15*time.Second, "cluster formed", func() bool {
		for _, n := range nodes {
			if len(n.Members()) != k-1 {
				return false
			}
		}
		return true
	})
	return nodes
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		tm := time.NewTimer(5 * time.Millisecond)
		<-tm.C
	}
}

// mode names how a test Bus reaches its node.
type mode string

const (
	modeSocket   mode = "socket"
	modeEmbedded mode = "embedded"
)

var modes = []mode{modeSocket, modeEmbedded}

// connect returns a Bus on n in mode m, closed at the end of the test.
func connect(t testing.TB, n *node.Node, m mode) *Bus {
	t.Helper()
	cfg := Config{Logger: testLogger()}
	var b *Bus
	var err error
	switch m {
	case modeSocket:
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b, err = DialConfig(ctx, n.SocketAddr().String(), cfg)
	case modeEmbedded:
		b, err = EmbeddedConfig(n, cfg)
	}
	if err != nil {
		t.Fatalf("connect %s: %v", m, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// awaitRoute makes sure events on sc published on from reach to: it keeps
// a reader on sc open on to (so the interest stays) and publishes probes
// until one arrives. Create the participants under test afterwards.
func awaitRoute(t testing.TB, from, to *Bus, sc scope.Scope) {
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
			return
		}
		if !errors.Is(err, ErrTimeout) {
			t.Fatal(err)
		}
	}
	t.Fatalf("no route for %s", sc)
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
	select {
	case ev := <-ch:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
		return nil
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
