package e2e

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/introspection"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/scope"
)

// interestPoolSize spreads the groups of TestUninterestedDaemonReceivesNothing
// over enough addresses that the scopes it picks have addresses of their own.
const interestPoolSize = 64

// TestUninterestedDaemonReceivesNothing: daemon C, whose clients listen on
// an unrelated scope only, receives no datagram of the group A publishes to
// (checked on C's metrics: no data datagram, no not-interested drop, since
// C never joined that group's multicast address); a listener added on C
// later starts receiving within a bounded time.
func TestUninterestedDaemonReceivesNothing(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	pub, other := distinctScopes(t, c.pool)
	size := []string{"--group-pool-size", fmt.Sprint(interestPoolSize)}
	a := c.start("A", opts{args: size})
	b := c.start("B", opts{args: size})
	cc := c.start("C", opts{args: size})
	formed := c.waitPeers(20 * time.Second)
	p := dial(t, a, "A/pub")
	lB := dial(t, b, "B/listener")
	lB.listen(pub)
	lC := dial(t, cc, "C/other")
	lC.listen(other)
	sub := pub + "sub/"
	routeB := waitRoute(t, 20*time.Second, p, sub, lB)
	routeC := waitRoute(t, 20*time.Second, p, other, lC)
	t.Logf("cluster formed in %v, events flowed to B after %v, to C after %v more", formed.Round(time.Millisecond),
		routeB.Round(time.Millisecond), routeC.Round(time.Millisecond))

	// C's connections wanted everything until their Hellos; C keeps
	// receiving what it gave up until the peers confirmed the narrower
	// interest (and a short settle time). Measure once that is over.
	testutil.WaitFor(t, 20*time.Second, "C's given-up scopes to stop lingering", func() bool {
		return cc.Metric("rsbd_lingering_scopes") == 0
	})
	before, sentBefore := cc.Metrics(), a.Metric(`rsbd_sent_datagrams_total{kind="data"}`)
	const n = 200
	evs := make([]*notification.Event, n)
	for i := range evs {
		evs[i] = p.event(sub, schemaText, fmt.Appendf(nil, "%d", i))
	}
	p.publishAll(evs)
	testutil.WaitFor(t, 20*time.Second, "B receiving the events", func() bool { return lB.count(onScope(sub, schemaText)) == n })
	after := cc.Metrics()
	for _, series := range []string{`rsbd_received_datagrams_total{kind="data"}`, `rsbd_drops_total{reason="not_interested"}`} {
		if after[series] != before[series] {
			t.Errorf("uninterested C: %s went from %v to %v", series, before[series], after[series])
		}
	}
	if sent := a.Metric(`rsbd_sent_datagrams_total{kind="data"}`); sent <= sentBefore {
		t.Fatalf("A sent no data datagrams (%v before, %v after)", sentBefore, sent)
	}
	if lC.count(onScope(pub, schemaText)) != 0 {
		t.Fatal("C's listener on another scope received events")
	}

	late := dial(t, cc, "C/late")
	late.listen(pub)
	took := waitRoute(t, 20*time.Second, p, sub, late)
	if got := cc.Metric(`rsbd_received_datagrams_total{kind="data"}`); got <= after[`rsbd_received_datagrams_total{kind="data"}`] {
		t.Fatalf("C received the late listener's events without counting data datagrams (%v)", got)
	}
	t.Logf("listener added later on C received its first event after %v", took.Round(time.Millisecond))
}

// distinctScopes picks the scope A publishes under and the scope C listens
// on so that their multicast addresses differ from each other and from
// those of the root and the introspection scope (which other daemons may
// join), making "nothing arrives" a property of the interest, not luck.
func distinctScopes(t *testing.T, pool string) (pub, other string) {
	t.Helper()
	ap := netip.MustParseAddrPort(pool)
	p, err := group.NewPool(group.Config{PoolBase: ap.Addr(), PoolPort: ap.Port(), PoolSize: interestPoolSize})
	if err != nil {
		t.Fatal(err)
	}
	addr := func(s string) netip.AddrPort { return p.Addr(group.ID(scope.MustParse(s))) }
	taken := map[netip.AddrPort]bool{addr("/"): true, addr(rsbsocket.IntrospectionScope.String()): true,
		addr(introspection.DaemonsScope.String()): true}
	pick := func(prefix string) string {
		for i := range 1000 {
			s := fmt.Sprintf("/%s%d/", prefix, i)
			if !taken[addr(s)] {
				taken[addr(s)] = true
				return s
			}
		}
		t.Fatal("no scope with an address of its own")
		return ""
	}
	return pick("wanted"), pick("other")
}
