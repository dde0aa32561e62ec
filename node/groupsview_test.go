package node

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// TestGroupsAndScopeCounts publishes from one node to a subscriber on
// another: the subscriber's node receives the scope's group, the
// publisher's sends on it, and both count the events by scope.
func TestGroupsAndScopeCounts(t *testing.T) {
	nodes := startNodes(t, 2, func(_ int, c *Config) { c.SocketAddr = "off" })
	a, r := nodes[0], nodes[1]
	var got atomic.Int64
	defer r.Subscribe(scope.MustParse("/groups/view/"), func(*notification.Event) { got.Add(1) })()
	testutil.WaitFor(t, 30*time.Second, "interest", func() bool { return a.interest().Wanted(groupID("/groups/view/")) })
	ev := &notification.Event{Scope: scope.MustParse("/groups/view/x/"), WireSchema: "bytes", Data: make([]byte, 100)}
	for i := range 20 {
		ev.ID.SequenceNumber = uint32(i)
		if err := a.Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 30*time.Second, "every event", func() bool { return got.Load() == 20 })
	addr := a.pool.Addr(groupID("/groups/view/"))
	received, _ := r.Groups()
	if !hasGroup(received, addr.String(), "/groups/view/") {
		t.Errorf("receiver's groups %v lack %s for /groups/view/", received, addr)
	}
	_, sent := a.Groups()
	if !hasGroup(sent, addr.String(), "/groups/view/") {
		t.Errorf("sender's groups %v lack %s for /groups/view/", sent, addr)
	}
	if c := scopeCount(a, "/groups/view/x/"); c.PublishedEvents != 20 || c.PublishedBytes < 20*100 {
		t.Errorf("publisher counts %+v", c)
	}
	if c := scopeCount(r, "/groups/view/x/"); c.DeliveredEvents != 20 || c.DeliveredBytes < 20*100 {
		t.Errorf("receiver counts %+v", c)
	}
}

func hasGroup(gs []GroupUse, addr, sc string) bool {
	return slices.ContainsFunc(gs, func(g GroupUse) bool { return g.Addr.String() == addr && slices.Contains(g.Scopes, sc) })
}

func scopeCount(n *Node, sc string) ScopeCount {
	for _, c := range n.ScopeCounts() {
		if c.Scope == sc {
			return c
		}
	}
	return ScopeCount{}
}
