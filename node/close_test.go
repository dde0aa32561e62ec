package node

import (
	"bytes"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/leakcheck"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// TestCloseLeavesNoGoroutines: two joined nodes that carried events
// (small and fragmented) between an embedded subscriber and socket clients
// leave no goroutine behind once the clients and the nodes are closed; an
// embedding program can start and stop nodes for as long as it runs.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		pool := testPool()
		a, err := New(testConfig(t, pool), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		cb := testConfig(t, pool)
		cb.Join = []string{a.GossipAddr().String()}
		b, err := New(cb, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		testutil.WaitFor(t, 10*time.Second, "cluster formed", func() bool { return len(a.Members()) == 1 })

		var got collector
		cancel := b.Subscribe(scope.MustParse("/leak/"), got.handle)
		sub := dialSocket(t, b)
		if err := sub.Send(helloBody(t, 1, "/leak/")); err != nil {
			t.Fatal(err)
		}
		pub := dialSocket(t, a)
		testutil.WaitFor(t, 10*time.Second, "interest gossiped", func() bool { return a.interest().Wanted(groupID("/leak/")) })
		big := bytes.Repeat([]byte("x"), 3<<20)
		for i, data := range [][]byte{[]byte("small"), big} {
			body, err := notification.Marshal(testutil.Event("/leak/x/", uint32(i), data))
			if err != nil {
				t.Fatal(err)
			}
			if err := pub.Send(body); err != nil {
				t.Fatal(err)
			}
		}
		testutil.WaitFor(t, 10*time.Second, "both events at b", func() bool { return got.len() == 2 })
		cancel()
		_ = sub.Close()
		_ = pub.Close()
	}()
	leakcheck.Wait(t, before, 15*time.Second)
}

// TestNewFailsCleanly: a node whose start fails after its transport and
// engine exist (its gossip port is taken) returns the error at once and
// leaves no goroutine behind; its Close must not wait for an engine that
// never ran.
func TestNewFailsCleanly(t *testing.T) {
	taken, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	before := runtime.NumGoroutine()
	c := testConfig(t, testPool())
	c.GossipAddr = taken.LocalAddr().String()
	done := make(chan error, 1)
	go func() {
		n, err := New(c, nil)
		if n != nil {
			n.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("New on a taken gossip port succeeded")
		}
		t.Logf("New failed as it should: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("New with a taken gossip port did not return")
	}
	leakcheck.Wait(t, before, 10*time.Second)
}
