package clienttest

import (
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/node"
)

// ClusterTimeout bounds the wait for nodes to see each other: generous,
// since tests share small machines.
const ClusterTimeout = 15 * time.Second

// Logger returns a logger for test nodes: warnings, everything with -v.
func Logger() *slog.Logger {
	lvl := slog.LevelWarn
	if testing.Verbose() {
		lvl = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
}

// PrivatePool returns a multicast pool with a random 239.255.x.0 base and
// port; the port lies below Linux's ephemeral range (32768–60999), where
// another socket could hold it.
func PrivatePool() group.Config {
	c := group.DefaultConfig()
	c.PoolBase = netip.AddrFrom4([4]byte{239, 255, byte(rand.IntN(200) + 20), 0})
	c.PoolPort = uint16(20000 + rand.IntN(12000))
	return c
}

// NodeConfig is a loopback node with ephemeral ports on pool.
func NodeConfig(pool group.Config) node.Config {
	return node.Config{
		SocketAddr:   "127.0.0.1:0",
		GossipAddr:   "127.0.0.1:0",
		DataAddr:     "127.0.0.1:0",
		LocalProfile: true,
		Group:        pool,
		Logger:       Logger(),
	}
}

// StartNodes starts k in-process nodes joined into one cluster, waits until
// they see each other and closes them at the end of the test.
func StartNodes(t testing.TB, k int) []*node.Node { return StartNodesWith(t, k, nil) }

// StartNodesWith is StartNodes with mod applied to the i-th node's
// configuration (if mod is not nil) before it starts.
func StartNodesWith(t testing.TB, k int, mod func(i int, c *node.Config)) []*node.Node {
	t.Helper()
	pool := PrivatePool()
	var nodes []*node.Node
	for i := range k {
		c := NodeConfig(pool)
		if mod != nil {
			mod(i, &c)
		}
		if i > 0 {
			c.Join = []string{nodes[0].GossipAddr().String()}
		}
		n, err := node.New(c, nil)
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		t.Cleanup(func() { n.Close() })
		nodes = append(nodes, n)
	}
	testutil.WaitFor(t, ClusterTimeout, "cluster formed", func() bool {
		for _, n := range nodes {
			if len(n.Members()) != k-1 {
				return false
			}
		}
		return true
	})
	return nodes
}
