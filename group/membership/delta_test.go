package membership

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/internal/testutil"
)

// largeGroups returns n distinct group ids, enough for a state too large
// for a broadcast when n is in the hundreds.
func largeGroups(prefix string, n int) []group.GroupID {
	ids := make([]group.GroupID, n)
	for i := range ids {
		ids[i] = gid(fmt.Sprintf("/%s/%d/", prefix, i))
	}
	return group.SortGroups(ids)
}

// startPair starts a and b with gossip too slow to matter, so that only
// PushLocal carries a's interest.
func startPair(t *testing.T) (a, b *testNode) {
	cfg := LocalConfig()
	cfg.GossipInterval, cfg.PushPullInterval = time.Hour, time.Hour
	cfg.NodeName = "a"
	a = startNodeConfig(t, cfg, 1, nil)
	cfg.NodeName = "b"
	b = startNodeConfig(t, cfg, 2, nil, a)
	testutil.WaitFor(t, waitTimeout, "a sees b", func() bool { return len(a.Members()) == 1 && len(b.Members()) == 1 })
	return a, b
}

// TestPushLocalSendsDeltas: once b confirmed a large state, each later
// PushLocal sends b only what changed, and b ends up holding exactly a's
// groups after every one.
func TestPushLocalSendsDeltas(t *testing.T) {
	a, b := startPair(t)
	ids := largeGroups("delta", 300)
	if _, err := a.local.Set(ids); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PushLocal(context.Background()); err != nil {
		t.Fatal(err)
	}
	const changes = 40
	for i := range changes {
		if i%4 == 3 {
			a.local.Remove(ids[i])
		} else if _, err := a.local.Add(gid(fmt.Sprintf("/more/%d/", i))); err != nil {
			t.Fatal(err)
		}
		if n, err := a.PushLocal(context.Background()); err != nil || n != 1 {
			t.Fatalf("change %d: PushLocal reached %d members: %v", i, n, err)
		}
		if !knows(b, a, a.LocalGroups()...) {
			t.Fatalf("change %d: b does not hold a's groups after PushLocal", i)
		}
	}
	sa, sb := a.Stats(), b.Stats()
	if sa.DeltasSent < changes || sb.DeltasApplied < changes || sb.DeltaMisses != 0 {
		t.Fatalf("deltas sent %d, applied %d, missed %d; want %d, %d, 0", sa.DeltasSent, sb.DeltasApplied, sb.DeltaMisses, changes, changes)
	}
}

// TestDeltaMissAsksForFullState: a member holding another version than
// the one a delta starts from asks for the whole state and confirms that,
// so PushLocal still returns with the member up to date.
func TestDeltaMissAsksForFullState(t *testing.T) {
	a, b := startPair(t)
	if _, err := a.local.Set(largeGroups("miss", 300)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PushLocal(context.Background()); err != nil {
		t.Fatal(err)
	}
	// b learns the next version unconfirmed, as gossip would bring it.
	if _, err := a.local.Add(gid("/miss/extra/1/")); err != nil {
		t.Fatal(err)
	}
	if !b.apply("a", a.local.Snapshot(a.instance, a.DataAddr())) {
		t.Fatal("b did not take a's newer state")
	}
	if _, err := a.local.Add(gid("/miss/extra/2/")); err != nil {
		t.Fatal(err)
	}
	if n, err := a.PushLocal(context.Background()); err != nil || n != 1 {
		t.Fatalf("PushLocal reached %d members: %v", n, err)
	}
	if !knows(b, a, a.LocalGroups()...) {
		t.Fatal("b does not hold a's groups after PushLocal")
	}
	sa, sb := a.Stats(), b.Stats()
	if sa.DeltasSent == 0 || sb.DeltaMisses == 0 || sa.FullOnRequest == 0 {
		t.Fatalf("deltas sent %d, missed %d, whole states on request %d; want each above 0", sa.DeltasSent, sb.DeltaMisses, sa.FullOnRequest)
	}
}
