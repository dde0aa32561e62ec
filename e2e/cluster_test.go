package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
)

// qosConf sets the QoS of daemon A per scope; the global QoS comes from
// the environment (RSB_QUALITYOFSERVICE_ORDERING=ORDERED: reliable and
// ordered), so every class is configured through RSB's cascade.
const qosConf = `[rsbd.qos]
/qos/ru/ = UNORDERED
/qos/uo/ = UNRELIABLE
/qos/uu/ = UNRELIABLE,UNORDERED
`

// qosClasses are the scopes of qosConf and their QoS.
var qosClasses = []struct {
	scope             string
	reliable, ordered bool
}{
	{"/qos/ro/", true, true},
	{"/qos/ru/", true, false},
	{"/qos/uo/", false, true},
	{"/qos/uu/", false, false},
}

const qosEvents = 1000

func TestThreeDaemons(t *testing.T) {
	t.Parallel()
	for _, multicast := range []bool{true, false} {
		name := map[bool]string{true: "multicast", false: "unicast"}[multicast]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testThreeDaemons(t, multicast)
		})
	}
}

// threeDaemons is the cluster and the clients of TestThreeDaemons.
type threeDaemons struct {
	pub              *client // on A, announces nothing
	bA, bABC, bX, bQ *client // on B: listeners on /a/, /a/b/c/, /x/, /qos/
	cA, cABC         *client // on C: listeners on /a/, /a/b/c/
	routed           []*client
	firstDelivered   time.Duration
}

func testThreeDaemons(t *testing.T, multicast bool) {
	c := newCluster(t)
	mode := "--multicast=" + strconv.FormatBool(multicast)
	a := c.start("A", opts{args: []string{mode}, env: []string{"RSB_QUALITYOFSERVICE_ORDERING=ORDERED"}, conf: qosConf})
	b := c.start("B", opts{args: []string{mode}})
	cc := c.start("C", opts{args: []string{mode}})
	conf := a.printConfig()
	for _, line := range []string{
		"qualityofservice.ordering = ORDERED  # env RSB_QUALITYOFSERVICE_ORDERING",
		"rsbd.qos./qos/uo/ = UNRELIABLE  # " + a.ConfFile() + ":4",
		"rsbd.multicast = " + strconv.FormatBool(multicast) + "  # flag --multicast",
	} {
		if !strings.Contains(conf, line) {
			t.Fatalf("A's configuration lacks %q:\n%s", line, conf)
		}
	}
	formed := c.waitPeers(20 * time.Second)
	td := threeDaemonClients(t, a, b, cc)
	t.Logf("cluster formed in %v, first event delivered %v later", formed.Round(time.Millisecond), td.firstDelivered.Round(time.Millisecond))

	checkRouting(t, td)
	checkBigEvent(t, td)
	checkQoS(t, td)
	for _, d := range c.daemons {
		m := d.Metrics()
		if joined := m["rsbd_joined_multicast_groups"]; (joined > 0) != multicast {
			t.Errorf("%s joined %v multicast groups with multicast=%v", d.Name(), joined, multicast)
		}
		t.Logf("%s: data sent %v received %v, nacks %v, repairs %v, losses %v", d.Name(),
			m[`rsbd_sent_datagrams_total{kind="data"}`], m[`rsbd_received_datagrams_total{kind="data"}`],
			m[`rsbd_sent_datagrams_total{kind="nack"}`], m["rsbd_repairs_sent_total"],
			m[`rsbd_loss_reports_total{reason="trail"}`]+m[`rsbd_loss_reports_total{reason="gone"}`]+m[`rsbd_loss_reports_total{reason="retries"}`])
	}
}

// threeDaemonClients connects the clients of TestThreeDaemons to daemons
// a, b and cc, announces the listeners and waits until events reach them.
func threeDaemonClients(t *testing.T, a, b, cc *daemon) *threeDaemons {
	var td threeDaemons
	td.pub = dial(t, a, "A/pub")
	td.bA, td.bABC, td.bX, td.bQ = dial(t, b, "B/a"), dial(t, b, "B/abc"), dial(t, b, "B/x"), dial(t, b, "B/qos")
	td.cA, td.cABC = dial(t, cc, "C/a"), dial(t, cc, "C/abc")
	td.bA.listen("/a/")
	td.bABC.listen("/a/b/c/")
	td.bX.listen("/x/")
	td.bQ.listen("/qos/")
	td.cA.listen("/a/")
	td.cABC.listen("/a/b/c/")
	td.routed = []*client{td.bA, td.bABC, td.cA, td.cABC}
	td.firstDelivered = waitRoute(t, 20*time.Second, td.pub, "/a/b/c/", td.routed...)
	waitRoute(t, 20*time.Second, td.pub, "/x/", td.bX)
	for _, q := range qosClasses {
		waitRoute(t, 20*time.Second, td.pub, q.scope, td.bQ)
	}
	return &td
}

// checkRouting: an event on /a/b/c/ reaches the listeners on /a/ and
// /a/b/c/ at B and C, and not the listener on /x/. The /x/ listener then
// gets an event of its own, published after: had the first reached it, it
// would have been queued before.
func checkRouting(t *testing.T, td *threeDaemons) {
	td.pub.publish("/a/b/c/", schemaText, []byte("routed"))
	td.pub.publish("/x/", schemaText, []byte("x-marker"))
	for _, l := range td.routed {
		testutil.WaitFor(t, 10*time.Second, l.name+" receiving the /a/b/c/ event", func() bool {
			return l.count(onScope("/a/b/c/", schemaText)) == 1
		})
	}
	testutil.WaitFor(t, 10*time.Second, "B/x receiving its marker", func() bool { return td.bX.count(onScope("/x/", schemaText)) == 1 })
	if n := td.bX.count(onScope("/a/", schemaText)) + td.bX.count(onScope("/a/", schemaProbe)); n != 0 {
		t.Fatalf("the listener on /x/ received %d events on /a/...", n)
	}
	if n := td.bQ.count(onScope("/a/", schemaText)); n != 0 {
		t.Fatalf("the listener on /qos/ received %d events on /a/...", n)
	}
}

// checkBigEvent: a 5 MiB event arrives intact at every listener.
func checkBigEvent(t *testing.T, td *threeDaemons) {
	big := make([]byte, 5<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	start := time.Now()
	td.pub.publish("/a/b/c/", schemaBytes, big)
	for _, l := range td.routed {
		testutil.WaitFor(t, 30*time.Second, l.name+" receiving the 5 MiB event", func() bool {
			return l.count(onScope("/a/b/c/", schemaBytes)) == 1
		})
		if got := l.received(onScope("/a/b/c/", schemaBytes))[0]; !bytes.Equal(got.Data, big) {
			t.Fatalf("%s: 5 MiB event damaged (%d bytes)", l.name, len(got.Data))
		}
	}
	t.Logf("5 MiB event at all four listeners in %v", time.Since(start).Round(time.Millisecond))
}

// checkQoS: each class delivers qosEvents events published back to back;
// the ordered classes keep their order and no class duplicates.
func checkQoS(t *testing.T, td *threeDaemons) {
	start := time.Now()
	for _, q := range qosClasses {
		evs := make([]*notification.Event, qosEvents)
		for i := range evs {
			evs[i] = td.pub.event(q.scope, schemaText, fmt.Appendf(nil, "%06d", i))
		}
		td.pub.publishAll(evs)
	}
	for _, q := range qosClasses {
		keep := onScope(q.scope, schemaText)
		testutil.WaitFor(t, 30*time.Second, fmt.Sprintf("%d events on %s", qosEvents, q.scope), func() bool {
			return td.bQ.count(keep) >= qosEvents
		})
		got := td.bQ.received(keep)
		seen := map[int]bool{}
		prev := -1
		for _, ev := range got {
			n, err := strconv.Atoi(strings.TrimSpace(string(ev.Data)))
			if err != nil {
				t.Fatalf("%s: payload %q", q.scope, ev.Data)
			}
			if seen[n] {
				t.Fatalf("%s: event %d delivered twice", q.scope, n)
			}
			if q.ordered && n < prev {
				t.Fatalf("%s (ordered): event %d delivered after %d", q.scope, n, prev)
			}
			seen[n], prev = true, n
		}
		if len(seen) != qosEvents {
			t.Fatalf("%s: %d distinct events of %d", q.scope, len(seen), qosEvents)
		}
	}
	t.Logf("%d events in each of 4 QoS classes delivered in %v", qosEvents, time.Since(start).Round(time.Millisecond))
}
