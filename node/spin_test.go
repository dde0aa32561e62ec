package node

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/syncbuf"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// Environment of the ponger process TestReplyingReaderPolls starts.
const (
	pongerEnv     = "RSBD_TEST_PONGER" // set: run as the ponger
	pongerJoinEnv = "RSBD_TEST_PONGER_JOIN"
	pongerPoolEnv = "RSBD_TEST_PONGER_POOL"
)

// TestReplyingReaderPolls: a node whose handler replies to a peer in
// another process polls its socket for the peer's answer instead of
// sleeping (rsbd_spin_waits_total grows); with SpinWait negative it never
// does. The pinger here chains its pings in its handler, answering each
// pong; the ponger, this test binary run again, answers each ping.
func TestReplyingReaderPolls(t *testing.T) {
	for _, c := range []struct {
		spin time.Duration
		want bool
	}{{0, true}, {-1, false}} {
		pool := testPool()
		cfg := testConfig(t, pool)
		cfg.SocketAddr = "off"
		cfg.QoS, cfg.ExplicitQoS = QoS{Reliable: true, Ordered: true}, true
		cfg.Transport.SpinWait = c.spin
		a, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		startPonger(t, a.GossipAddr(), netip.AddrPortFrom(pool.PoolBase, pool.PoolPort))
		const n = 50
		var got collector
		defer a.Subscribe(scope.MustParse("/resp/"), func(ev *notification.Event) {
			got.handle(ev)
			if next := binary.BigEndian.Uint32(ev.Data) + 1; next < n {
				if err := a.Publish(context.Background(), seqEvent("/req/", next, 64)); err != nil {
					t.Error(err)
				}
			}
		})()
		testutil.WaitFor(t, 30*time.Second, "the ponger's interest", func() bool { return a.interest().Wanted(groupID("/req/")) })
		// The first pings may go before the ponger's subscription took
		// effect on its side: ping until a pong comes.
		testutil.WaitFor(t, 30*time.Second, "the first pong", func() bool {
			if got.len() == 0 {
				if err := a.Publish(context.Background(), seqEvent("/req/", 0, 64)); err != nil {
					t.Fatal(err)
				}
			}
			return got.len() > 0
		})
		testutil.WaitFor(t, 30*time.Second, "every pong", func() bool {
			return binary.BigEndian.Uint32(got.get(got.len()-1).Data) == n-1
		})
		waits := gatherCounter(t, a, "rsbd_spin_waits_total")
		if (waits > 0) != c.want {
			t.Fatalf("SpinWait %v: %v spin waits", c.spin, waits)
		}
		a.Close()
	}
}

// startPonger runs this test binary again as a ponger node that joins
// join and answers every event on /req/ with the same sequence number on
// /resp/, from its handler. It runs until the test ends.
func startPonger(t *testing.T, join, pool netip.AddrPort) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPonger$")
	cmd.Env = append(os.Environ(), pongerEnv+"=1", pongerJoinEnv+"="+join.String(), pongerPoolEnv+"="+pool.String())
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the ponger ends at EOF
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ponger: %v\n%s", err, out.String())
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("ponger did not end; killed: %v\n%s", <-done, out.String())
		}
	})
}

// TestPonger is the ponger process of TestReplyingReaderPolls; run
// directly, it skips.
func TestPonger(t *testing.T) {
	if os.Getenv(pongerEnv) == "" {
		t.Skip("the ponger process of TestReplyingReaderPolls")
	}
	poolAddr, err := netip.ParseAddrPort(os.Getenv(pongerPoolEnv))
	if err != nil {
		t.Fatal(err)
	}
	pool := testPool()
	pool.PoolBase, pool.PoolPort = poolAddr.Addr(), poolAddr.Port()
	cfg := testConfig(t, pool)
	cfg.SocketAddr = "off"
	cfg.QoS, cfg.ExplicitQoS = QoS{Reliable: true, Ordered: true}, true
	cfg.Join = []string{os.Getenv(pongerJoinEnv)}
	b, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	defer b.Subscribe(scope.MustParse("/req/"), func(ev *notification.Event) {
		if err := b.Publish(context.Background(), seqEvent("/resp/", binary.BigEndian.Uint32(ev.Data), 64)); err != nil {
			t.Error(err)
		}
	})()
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "ponger: stdin:", err)
	}
}
