package e2e

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
)

// lossyEventSizes are the sizes TestLargeEventsOverALossyLink cycles
// through: small events beside ones split into hundreds of datagrams.
var lossyEventSizes = []int{100, 20 << 10, 3000, 1 << 20, 50, 200 << 10, 1400, 64 << 10}

// lossyPayload is event i's payload: its number, then bytes that depend on it.
func lossyPayload(i int) []byte {
	d := make([]byte, lossyEventSizes[i%len(lossyEventSizes)]+4)
	binary.BigEndian.PutUint32(d, uint32(i))
	for k := 4; k < len(d); k++ {
		d[k] = byte(k*7 + i)
	}
	return d
}

// TestLargeEventsOverALossyLink: two hosts on a bridge whose kernels drop
// 5 % of the incoming UDP datagrams of the bus (nftables, gossip spared).
// A client of daemon A publishes events from 50 bytes to 1 MiB on a
// reliable ordered and a reliable unordered scope, in LAN-sized datagrams;
// a client of daemon B receives every one of them intact, in order on the
// ordered scope, and the rules did drop datagrams.
func TestLargeEventsOverALossyLink(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("nftables (nft) is not installed")
	}
	lab := newNetLab(t)
	ipA, ipB := lab.host("a"), lab.host("b")
	c := newCluster(t)
	env := []string{"RSB_QUALITYOFSERVICE_ORDERING=ORDERED"}
	a := c.start("A", opts{netns: lab.ns("a"), ip: ipA, env: env, conf: qosConf})
	b := c.start("B", opts{netns: lab.ns("b"), ip: ipB, env: env, conf: qosConf})
	pub, sub := dial(t, a, "A/pub"), dial(t, b, "B/sub")
	sub.listen("/qos/ro/", "/qos/ru/")
	waitRoute(t, 20*time.Second, pub, "/qos/ro/", sub)
	waitRoute(t, 20*time.Second, pub, "/qos/ru/", sub)
	for _, host := range []string{"a", "b"} {
		if out, err := exec.Command("ip", "netns", "exec", lab.ns(host), "nft", "add table inet lossy").CombinedOutput(); err != nil {
			t.Skipf("this kernel takes no nftables rules: %v: %s", err, out) // as newNetLab skips without namespaces
		}
		lab.run(host, "nft", "add chain inet lossy in { type filter hook input priority 0; }")
		lab.run(host, "nft", "add rule inet lossy in udp dport != 7946 numgen random mod 100 < 5 counter drop")
	}
	const n = 48
	for _, sc := range []string{"/qos/ro/", "/qos/ru/"} {
		evs := make([]*notification.Event, n)
		for i := range evs {
			evs[i] = pub.event(sc, schemaBytes, lossyPayload(i))
		}
		pub.publishAll(evs)
	}
	for _, q := range []struct {
		scope   string
		ordered bool
	}{{"/qos/ro/", true}, {"/qos/ru/", false}} {
		keep := onScope(q.scope, schemaBytes)
		testutil.WaitFor(t, 60*time.Second, fmt.Sprintf("%d events on %s", n, q.scope), func() bool { return sub.count(keep) >= n })
		seen := map[int]bool{}
		last := -1
		for _, ev := range sub.received(keep) {
			i := int(binary.BigEndian.Uint32(ev.Data))
			switch {
			case !bytes.Equal(ev.Data, lossyPayload(i)):
				t.Fatalf("%s: event %d damaged (%d bytes)", q.scope, i, len(ev.Data))
			case seen[i]:
				t.Fatalf("%s: event %d delivered twice", q.scope, i)
			case q.ordered && i < last:
				t.Fatalf("%s: event %d after %d", q.scope, i, last)
			}
			seen[i], last = true, i
		}
		if len(seen) != n {
			t.Fatalf("%s: %d events, want %d", q.scope, len(seen), n)
		}
	}
	dropped := 0
	for _, host := range []string{"a", "b"} {
		out, err := exec.Command("ip", "netns", "exec", lab.ns(host), "nft", "list", "table", "inet", "lossy").CombinedOutput()
		if err != nil {
			t.Fatalf("nft list: %v: %s", err, out)
		}
		if m := regexp.MustCompile(`counter packets (\d+)`).FindSubmatch(out); m != nil {
			k, _ := strconv.Atoi(string(m[1]))
			dropped += k
		}
	}
	if dropped == 0 {
		t.Fatal("the link dropped nothing")
	}
	t.Logf("the link dropped %d datagrams", dropped)
}
