package e2e

import (
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testport"
	"github.com/rsbd/rsbd/internal/testutil"
)

// TestStartInAnyOrder: a daemon whose --join member comes up after it
// keeps contacting it and forms the cluster once it does; the member was
// started with no --join of its own, so only the first daemon's join loop
// can bring them together. Events then flow both ways.
func TestStartInAnyOrder(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	seed, _, release := testport.Hold(t)
	early := c.start("early", opts{solo: true, args: []string{"--join", seed}})
	testutil.WaitFor(t, 20*time.Second, "a failed join attempt", func() bool {
		return early.Metric(`rsbd_membership_joins_total{result="failed"}`) >= 1
	})
	release()
	late := c.start("late", opts{solo: true, args: []string{"--gossip-addr", seed}})
	formed := c.waitPeers(30 * time.Second)
	pubE, pubL := dial(t, early, "early/pub"), dial(t, late, "late/pub")
	lisE, lisL := dial(t, early, "early/l"), dial(t, late, "late/l")
	lisE.listen("/order/")
	lisL.listen("/order/")
	waitRoute(t, 20*time.Second, pubE, "/order/", lisL)
	waitRoute(t, 20*time.Second, pubL, "/order/", lisE)
	t.Logf("cluster formed %v after the late daemon was ready", formed.Round(time.Millisecond))
}
