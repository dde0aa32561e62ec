package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// TestSubscribeIsABarrier: once Subscribe returns on one node, an event
// published right away on another node reaches it (the peers confirmed the
// new interest before Subscribe returned).
func TestSubscribeIsABarrier(t *testing.T) {
	nodes := startNodes(t, 2, func(_ int, c *Config) { c.SocketAddr = "off" })
	a, b := nodes[0], nodes[1]
	for i := 0; i < 30; i++ {
		var got collector
		sc := fmt.Sprintf("/zz/%d/", i)
		cancel := a.Subscribe(scope.MustParse(sc), got.handle)
		if err := b.Publish(context.Background(), testutil.Event(sc, uint32(i), []byte("x"))); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 10*time.Second, "event "+sc, func() bool { return got.len() == 1 })
		cancel()
	}
}

// TestNarrowingLingers: after the last sink on a scope goes away the node
// still receives it for InterestLinger, so a sink on a narrower scope that
// replaced it loses nothing while peers learn the change.
func TestNarrowingLingers(t *testing.T) {
	nodes := startNodes(t, 2, func(_ int, c *Config) {
		c.SocketAddr = "off"
		c.InterestLinger = 300 * time.Millisecond
	})
	a, b := nodes[0], nodes[1]
	cancelRoot := a.Subscribe(scope.Root, func(*notification.Event) {})
	var got collector
	defer a.Subscribe(scope.MustParse("/n/"), got.handle)()
	if !a.wantsGroup(groupID("/")) || a.wantsGroup(groupID("/n/")) {
		t.Fatal("root sink must cover /n/")
	}
	cancelRoot()
	if !a.wantsGroup(groupID("/")) {
		t.Fatal("root group dropped at once instead of lingering")
	}
	if err := b.Publish(context.Background(), testutil.Event("/n/x/", 1, []byte("x"))); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "event during the linger", func() bool { return got.len() == 1 })
	if !a.mayRepeat(scope.MustParse("/n/x/")) || !a.mayRepeat(scope.MustParse("/n/")) {
		t.Fatal("events under the lingering root are not checked for repeats")
	}
	testutil.WaitFor(t, 10*time.Second, "linger over", func() bool {
		return !a.wantsGroup(groupID("/")) && a.wantsGroup(groupID("/n/"))
	})
	// The copy sent to the lingering root group, if any, was dropped.
	if n := got.len(); n != 1 {
		t.Fatalf("event delivered %d times", n)
	}
	if a.mayRepeat(scope.MustParse("/n/x/")) {
		t.Fatal("repeat check still on after the linger")
	}
}
