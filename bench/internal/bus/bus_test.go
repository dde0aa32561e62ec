package bus

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
)

// inbox collects payloads.
type inbox struct {
	mu  sync.Mutex
	got [][]byte
}

func (b *inbox) handle(p []byte) {
	b.mu.Lock()
	b.got = append(b.got, append([]byte(nil), p...))
	b.mu.Unlock()
}

func (b *inbox) first() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.got[0]
}

func (b *inbox) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.got)
}

// startDaemon starts a node with a socket server on loopback, on a random
// multicast pool, closed when the test ends.
func startDaemon(t *testing.T) *Embedded {
	t.Helper()
	d, err := NewEmbedded(NodeConfig{
		PoolBase: fmt.Sprintf("239.255.%d.0", 20+rand.IntN(200)),
		PoolPort: uint16(20000 + rand.IntN(12000)),
		Socket:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// dialSocket opens a socket endpoint of n connections to addr, closed when
// the test ends.
func dialSocket(t *testing.T, addr string, n int) *Socket {
	t.Helper()
	s, err := DialSocket(context.Background(), addr, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSubject(t *testing.T) {
	if got := Subject("/bench/thr/1/"); got != "bench.thr.1" {
		t.Fatalf("Subject = %q", got)
	}
}

func TestUDPEchoRoundTrip(t *testing.T) {
	e, err := StartUDPEcho()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c, err := DialUDP(e.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Subscribe("", nil); err != ErrNoSubscribe {
		t.Fatalf("Subscribe: %v", err)
	}
	// UDP may drop; retry until the echo comes back.
	var ok bool
	for i := 0; i < 100 && !ok; i++ {
		if ok, err = c.RoundTrip([]byte("ping"), 100*time.Millisecond, func(b []byte) bool { return bytes.Equal(b, []byte("ping")) }); err != nil {
			t.Fatal(err)
		}
	}
	if !ok {
		t.Fatal("no echo")
	}
	// A reply that does not match is skipped until the timeout.
	if ok, err := c.RoundTrip([]byte("x"), 20*time.Millisecond, func([]byte) bool { return false }); ok || err != nil {
		t.Fatalf("unmatched round trip = %v, %v", ok, err)
	}
}

// TestSocketThroughDaemon publishes from a socket client through a node's
// socket server to another socket client that announced a listener, and
// from the node's embedded side to the same listener.
func TestSocketThroughDaemon(t *testing.T) {
	d := startDaemon(t)
	addr := d.Node().SocketAddr().String()
	pub := dialSocket(t, addr, 1)
	sub := dialSocket(t, addr, 2)
	var onA, onB, embedded inbox
	cancelA, err := sub.Subscribe("/t/a/", onA.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer cancelA()
	cancelB, _ := sub.Subscribe("/t/b/", onB.handle)
	defer cancelB()
	cancelE, _ := d.Subscribe("/t/a/", embedded.handle)
	defer cancelE()
	// The listener's Hello is processed asynchronously: publish until it
	// takes effect, as the benchmark's probes do.
	testutil.WaitFor(t, 10*time.Second, "socket delivery", func() bool {
		if err := pub.Publish("/t/a/", []byte("from socket")); err != nil {
			t.Fatal(err)
		}
		if err := pub.Flush(); err != nil {
			t.Fatal(err)
		}
		return onA.len() > 0 && embedded.len() > 0
	})
	testutil.WaitFor(t, 10*time.Second, "embedded delivery", func() bool {
		if err := d.Publish("/t/b/", []byte("from node")); err != nil {
			t.Fatal(err)
		}
		return onB.len() > 0
	})
	if a, b := onA.first(), onB.first(); !bytes.Equal(a, []byte("from socket")) || !bytes.Equal(b, []byte("from node")) {
		t.Fatalf("payloads %q %q", a, b)
	}
}

// TestSocketInlineReply replies from inside a socket handler (the reader
// goroutine) on the same endpoint, as the ponger does, through a daemon.
func TestSocketInlineReply(t *testing.T) {
	d := startDaemon(t)
	addr := d.Node().SocketAddr().String()
	pinger := dialSocket(t, addr, 1)
	ponger := dialSocket(t, addr, 1)
	var ir InlineReplier = ponger
	if !ir.InlineReply() {
		t.Fatal("socket endpoint does not reply inline")
	}
	cancelPong, err := ponger.Subscribe("/rt/ping/", func(p []byte) {
		if ponger.Publish("/rt/pong/", p) == nil {
			_ = ponger.Flush()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cancelPong()
	var pongs inbox
	cancelPing, err := pinger.Subscribe("/rt/pong/", pongs.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer cancelPing()
	testutil.WaitFor(t, 10*time.Second, "inline pong", func() bool {
		if err := pinger.Publish("/rt/ping/", []byte("ping")); err != nil {
			t.Fatal(err)
		}
		if err := pinger.Flush(); err != nil {
			t.Fatal(err)
		}
		return pongs.len() > 0
	})
	if got := pongs.first(); !bytes.Equal(got, []byte("ping")) {
		t.Fatalf("pong %q", got)
	}
}
