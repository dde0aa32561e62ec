package e2e

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
)

// TestStalledClientDoesNotDelayOthers: a client of B that stops reading
// while A publishes far more than its queue and socket buffers hold does
// not delay delivery to B's other client; the daemon drops for the stalled
// one and counts it.
func TestStalledClientDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	const (
		n       = 400
		chunk   = 10
		size    = 32 << 10 // 12.5 MiB in all, beyond the stalled client's 1 MiB queue and kernel buffers
		queueMB = 1 << 20
	)
	c := newCluster(t)
	a := c.start("A", opts{})
	b := c.start("B", opts{env: []string{fmt.Sprintf("RSB_RSBD_SOCKET_QUEUE_BYTES=%d", queueMB)}})
	c.waitPeers(20 * time.Second)
	pub := dial(t, a, "A/pub")
	fast := dial(t, b, "B/fast")
	fast.listen("/s/")
	stalled := dialStalled(t, b, "B/stalled")
	stalled.listen("/s/")
	waitRoute(t, 20*time.Second, pub, "/s/", fast)

	// The publisher sends in chunks, each once the reading client has the
	// previous one, so the reading client's own queue stays short and any
	// delay would come from the stalled client.
	var worst time.Duration
	start := time.Now()
	for sent := 0; sent < n; sent += chunk {
		evs := make([]*notification.Event, chunk)
		for i := range evs {
			evs[i] = pub.event("/s/", schemaBytes, bytes.Repeat([]byte{byte(sent + i)}, size))
		}
		pub.publishAll(evs)
		worst = max(worst, testutil.WaitFor(t, 10*time.Second, "the reading client receiving a chunk", func() bool {
			return fast.count(onScope("/s/", schemaBytes)) == sent+chunk
		}))
	}
	took := time.Since(start)
	seen := map[uint32]bool{}
	for _, ev := range fast.received(onScope("/s/", schemaBytes)) {
		if len(ev.Data) != size || bytes.Count(ev.Data, ev.Data[:1]) != size || seen[ev.ID.SequenceNumber] {
			t.Fatalf("event %d damaged or duplicated", ev.ID.SequenceNumber)
		}
		seen[ev.ID.SequenceNumber] = true
	}
	var drops float64
	testutil.WaitFor(t, 10*time.Second, "drops counted for the stalled client", func() bool {
		drops = b.Metric(`rsbd_drops_total{reason="slow_client"}`)
		return drops > 0
	})
	t.Logf("%d events of %d KiB reached the reading client in %v (slowest chunk of %d: %v) while %v were dropped for the stalled one",
		n, size>>10, took.Round(time.Millisecond), chunk, worst.Round(time.Millisecond), drops)
}
