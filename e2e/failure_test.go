package e2e

import (
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
)

// TestKillAndRejoin: after kill -9 of daemon C, A and B notice (their peer
// gauges drop, they log C as failed and free its streams) and keep
// serving; C restarted on the same addresses rejoins and events reach its
// clients again.
func TestKillAndRejoin(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("A", opts{})
	b := c.start("B", opts{})
	cc := c.start("C", opts{})
	c.waitPeers(20 * time.Second)
	pub := dial(t, a, "A/pub")
	lB, lC := dial(t, b, "B/k"), dial(t, cc, "C/k")
	lB.listen("/k/")
	lC.listen("/k/")
	waitRoute(t, 20*time.Second, pub, "/k/", lB, lC)

	cc.Kill()
	detect := testutil.WaitFor(t, 30*time.Second, "A and B noticing C's death", func() bool {
		return a.Metric("rsbd_peers") == 1 && b.Metric("rsbd_peers") == 1
	})
	for _, d := range []*daemon{a, b} {
		testutil.WaitFor(t, 10*time.Second, d.Name()+" logging C's failure", func() bool {
			return d.Logged(`"msg":"peer gone"`, `"name":"C"`, `"kind":"fail"`)
		})
	}
	if stopped, _ := lC.stopped(10 * time.Second); !stopped {
		t.Error("C's client still connected after kill -9")
	}
	serving := waitRoute(t, 20*time.Second, pub, "/k/", lB)

	start := time.Now()
	cc.restart()
	ready := time.Since(start)
	rejoin := c.waitPeers(30 * time.Second)
	lC2 := dial(t, cc, "C/k again")
	lC2.listen("/k/")
	flow := waitRoute(t, 20*time.Second, pub, "/k/", lC2, lB)
	t.Logf("kill -9: failure detected by A and B in %v, A to B served %v later; restart: ready in %v, "+
		"cluster whole again %v later, events reached C's new listener %v later",
		detect.Round(time.Millisecond), serving.Round(time.Millisecond), ready.Round(time.Millisecond),
		rejoin.Round(time.Millisecond), flow.Round(time.Millisecond))
}
