package node

import (
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/internal/faultnet"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport"
)

// testPool returns a multicast pool private to one test: a random
// 239.255.x.0 base and port, so parallel tests never hear each other. The
// port lies below Linux's ephemeral range (32768–60999), where a socket of
// another test could hold it and make the join fail.
func testPool() group.Config {
	c := group.DefaultConfig()
	c.PoolBase = netip.AddrFrom4([4]byte{239, 255, byte(rand.IntN(200) + 20), 0})
	c.PoolPort = uint16(20000 + rand.IntN(12000))
	return c
}

// testConfig returns a loopback node config with ephemeral ports.
func testConfig(t testing.TB, pool group.Config) Config {
	t.Helper()
	lvl := slog.LevelWarn
	if testing.Verbose() {
		lvl = slog.LevelDebug
	}
	return Config{
		SocketAddr:   "127.0.0.1:0",
		GossipAddr:   "127.0.0.1:0",
		DataAddr:     "127.0.0.1:0",
		LocalProfile: true,
		Group:        pool,
		Logger:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})),
	}
}

// startNodes starts k nodes joined into one cluster.
func startNodes(t testing.TB, k int, mod func(i int, c *Config)) []*Node {
	t.Helper()
	pool := testPool()
	var nodes []*Node
	for i := 0; i < k; i++ {
		c := testConfig(t, pool)
		if mod != nil {
			mod(i, &c)
		}
		if i > 0 {
			c.Join = []string{nodes[0].GossipAddr().String()}
		}
		n, err := New(c, nil)
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		t.Cleanup(func() { n.Close() })
		nodes = append(nodes, n)
	}
	testutil.WaitFor(t, 10*time.Second, "cluster formed", func() bool {
		for _, n := range nodes {
			if len(n.Members()) != k-1 {
				return false
			}
		}
		return true
	})
	return nodes
}

func groupID(s string) [16]byte { return group.ID(scope.MustParse(s)) }

// sendBatched publishes n events through socket client c, batch frames per
// write (as client libraries buffer): event i is ev after set(i, ev) has
// adjusted it (its scope, its sequence number). The frames are encoded
// into one buffer reused for every batch.
func sendBatched(c *sockclient.ClientConn, ev *notification.Event, n, batch int, set func(i int, ev *notification.Event)) error {
	_, err := sendUntil(c, ev, n, batch, nil, set)
	return err
}

// sendUntil is sendBatched that also stops before a batch once stop (if
// not nil) is set; it returns how many events it sent.
func sendUntil(c *sockclient.ClientConn, ev *notification.Event, n, batch int, stop *atomic.Bool, set func(i int, ev *notification.Event)) (int, error) {
	var buf []byte
	bodies := make([][]byte, 0, batch)
	i := 0
	for i < n && (stop == nil || !stop.Load()) {
		buf, bodies = buf[:0], bodies[:0]
		for ; i < n && len(bodies) < batch; i++ {
			set(i, ev)
			start := len(buf)
			buf = notification.AppendNotification(buf, ev)
			bodies = append(bodies, buf[start:])
		}
		if err := c.SendMany(bodies); err != nil {
			return i - len(bodies), err
		}
	}
	return i, nil
}

// remoteListener starts two nodes and a socket client of the second that
// announced a listener on sc (an introspection Hello), and returns once
// the first node knows of that interest.
func remoteListener(tb testing.TB, sc string) (a, b *Node, sub *sockclient.ClientConn) {
	tb.Helper()
	nodes := startNodes(tb, 2, nil)
	a, b = nodes[0], nodes[1]
	sub = dialSocket(tb, b)
	if err := sub.Send(helloBody(tb, 0, sc)); err != nil {
		tb.Fatal(err)
	}
	testutil.WaitFor(tb, 10*time.Second, "interest", func() bool { return a.interest().Wanted(groupID(sc)) })
	return a, b, sub
}

// countFrames reads frames from c into one reused buffer, adding each to
// got, until c fails; then it sends the error to done. The benchmarks run
// it as a goroutine per subscribing connection.
func countFrames(c *sockclient.ClientConn, got *atomic.Int64, done chan<- error) {
	var body []byte
	for {
		var err error
		if body, err = c.RecvInto(body); err != nil {
			done <- err
			return
		}
		got.Add(1)
	}
}

// metricValue returns the value of the counter or gauge name of n: the
// series whose label has value, or the only series when label is "".
func metricValue(t testing.TB, n *Node, name, label, value string) float64 {
	t.Helper()
	mfs, err := n.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label != "" && labelValue(m, label) != value {
				continue
			}
			if label == "" && len(mf.GetMetric()) != 1 {
				break
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no series %s{%s=%q}", name, label, value)
	return 0
}

// gatherCounter returns the value of the unlabelled counter name of n.
func gatherCounter(t testing.TB, n *Node, name string) float64 {
	t.Helper()
	return metricValue(t, n, name, "", "")
}

// patientNackTries is how many NACKs the receivers of the lossy-network
// tests send for a hole before they give it up (the default gives up after
// ten and at least a second; past ten they come every 250 ms at most): a
// sender slowed by the race detector and a loaded host may answer later,
// and those tests are about what the streams deliver, not about when a
// receiver gives up on a dead sender.
const patientNackTries = 100

// startFaultNodes starts n nodes whose datagrams cross a faultnet network
// configured with nc (its MaxDatagram is the nodes' too), after set has
// adjusted each node's config.
func startFaultNodes(tb testing.TB, n int, nc faultnet.Config, set func(i int, c *Config)) (*faultnet.Network, []*Node) {
	tb.Helper()
	net, err := faultnet.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	nodes := startNodes(tb, n, func(i int, c *Config) {
		c.MaxDatagram = nc.MaxDatagram
		c.NewConn = func(_ transport.Config, h transport.Handler) (transport.Conn, error) {
			return net.Listen(netip.AddrPort{}, h)
		}
		set(i, c)
	})
	return net, nodes
}
