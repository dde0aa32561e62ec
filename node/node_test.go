package node

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// collector gathers the events a subscription receives.
type collector struct {
	mu  sync.Mutex
	evs []*notification.Event
}

func (c *collector) handle(ev *notification.Event) {
	c.mu.Lock()
	c.evs = append(c.evs, ev)
	c.mu.Unlock()
}

func (c *collector) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.evs)
}

func (c *collector) get(i int) *notification.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.evs[i]
}

func TestTwoNodesEmbedded(t *testing.T) {
	nodes := startNodes(t, 2, nil)
	a, b := nodes[0], nodes[1]
	var onA, onB, onX collector
	defer b.Subscribe(scope.MustParse("/a/"), onB.handle)()
	defer b.Subscribe(scope.MustParse("/x/"), onX.handle)()
	defer a.Subscribe(scope.MustParse("/a/b/"), onA.handle)()
	testutil.WaitFor(t, 10*time.Second, "interest gossiped", func() bool {
		return a.interest().Wanted(groupID("/a/"))
	})
	big := bytes.Repeat([]byte("0123456789abcdef"), 5<<16) // 5 MiB
	for i, data := range [][]byte{[]byte("hello"), big} {
		if err := a.Publish(context.Background(), testutil.Event("/a/b/c/", uint32(i), data)); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 10*time.Second, "two events at B", func() bool { return onB.len() == 2 })
	if got := onB.get(1); !bytes.Equal(got.Data, big) || got.Scope.String() != "/a/b/c/" {
		t.Fatalf("5 MiB event damaged: %d bytes on %s", len(got.Data), got.Scope)
	}
	if onA.len() != 2 {
		t.Fatalf("local subscriber on A got %d events, want 2", onA.len())
	}
	if onX.len() != 0 {
		t.Fatalf("subscriber on /x/ got %d events", onX.len())
	}
}
