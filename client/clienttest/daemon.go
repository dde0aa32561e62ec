package clienttest

import (
	"fmt"
	"os"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
)

// Daemon is one rsbd process of StartDaemons. The testutil.Daemon it
// embeds gives its ready file (Info), logs, signals and metrics.
type Daemon struct {
	*testutil.Daemon
}

// URI returns socket://host:port of the daemon's socket server.
func (d *Daemon) URI() string { return "socket://" + d.Info().Socket }

// StartDaemons builds cmd/rsbd and runs k daemons on loopback joined into
// one cluster, each with its own temporary directory and no RSB
// configuration of the caller. They are stopped at the end of the test.
func StartDaemons(t testing.TB, k int) []*Daemon {
	t.Helper()
	bin := testutil.Build(t, "github.com/rsbd/rsbd/cmd/rsbd")
	pool := PrivatePool()
	poolArg := fmt.Sprintf("%s:%d", pool.PoolBase, pool.PoolPort)
	var ds []*Daemon
	for i := range k {
		name := fmt.Sprintf("d%d-%d", i, os.Getpid())
		args := []string{"--local", "--group-pool", poolArg, "--socket-addr", "127.0.0.1:0",
			"--gossip-addr", "127.0.0.1:0", "--data-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
			"--log-level", "warn", "--name", name}
		if i > 0 {
			args = append(args, "--join", ds[0].Info().Gossip)
		}
		ds = append(ds, &Daemon{testutil.StartDaemon(t, testutil.DaemonSpec{Bin: bin, Name: name}, args...)})
	}
	testutil.WaitFor(t, ClusterTimeout, "daemons see each other", func() bool {
		for _, d := range ds {
			if d.peers() != k-1 {
				return false
			}
		}
		return true
	})
	return ds
}

// peers reads the daemon's rsbd_peers gauge (-1 when unavailable).
func (d *Daemon) peers() int {
	m, err := d.Scrape()
	if err != nil {
		return -1
	}
	if n, ok := m["rsbd_peers"]; ok {
		return int(n)
	}
	return -1
}
