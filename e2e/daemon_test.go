package e2e

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
)

// cluster is the daemons of one test, sharing a multicast pool no other
// test uses.
type cluster struct {
	t       testing.TB
	pool    string
	daemons []*daemon
}

var (
	poolSeq   atomic.Uint32
	poolStart = rand.Uint32N(1 << 16)
)

// newCluster returns an empty cluster with a private multicast pool: a
// 239.201.x.0 base (apart from the ranges of the packages' own tests) and a
// port below the ephemeral range, both distinct per test.
func newCluster(t testing.TB) *cluster {
	i := poolStart + poolSeq.Add(1)
	pool := fmt.Sprintf("239.201.%d.0:%d", i%250+1, 20000+(i*37)%12000)
	return &cluster{t: t, pool: pool}
}

// opts are the per-daemon settings of a test.
type opts struct {
	args []string // extra flags
	env  []string // extra environment, e.g. RSB_QUALITYOFSERVICE_ORDERING=ORDERED
	conf string   // content of the daemon's rsb.conf (RSB_CONFIG_FILES)
	solo bool     // do not join the cluster's first daemon
	// netns, if set, runs the daemon in that network namespace on its
	// interface eth0 with address ip, reached by its clients through its
	// Unix socket (its loopback is the namespace's own).
	netns, ip string
}

// daemon is one rsbd process of a test: the process (start, signals,
// logs, metrics) is the embedded testutil.Daemon's, the command line and
// the witness client are the test's.
type daemon struct {
	*testutil.Daemon
	t    testing.TB
	args []string // the command line of start, which restart reuses

	mu       sync.Mutex
	witnessC *client // see witness; reset when the process restarts
}

// start runs a daemon named name on loopback ports the kernel picks, with
// the fast local memberlist profile, joined to the cluster's first daemon.
func (c *cluster) start(name string, o opts) *daemon {
	c.t.Helper()
	d := &daemon{t: c.t, Daemon: testutil.NewDaemon(c.t, testutil.DaemonSpec{
		Bin: rsbdBin, Name: name, Conf: "# " + name + "\n" + o.conf, Env: o.env, Netns: o.netns})}
	d.args = []string{"--local", "--name", name, "--group-pool", c.pool,
		"--socket-addr", "127.0.0.1:0", "--gossip-addr", "127.0.0.1:0", "--data-addr", "127.0.0.1:0",
		"--metrics-addr", "127.0.0.1:0", "--log-format", "json"}
	if o.netns != "" {
		d.args = []string{"--local", "--name", name, "--group-pool", c.pool, "--interface", "eth0",
			"--socket-addr", "off", "--socket-path", filepath.Join(d.Dir(), "rsbd.sock"),
			"--gossip-addr", o.ip + ":7946", "--data-addr", o.ip + ":0", "--advertise-addr", o.ip + ":7946",
			"--metrics-addr", "off", "--log-format", "json"}
	}
	if len(c.daemons) > 0 && !o.solo {
		d.args = append(d.args, "--join", c.daemons[0].Info().Gossip)
	}
	d.args = append(d.args, o.args...)
	d.run(d.args)
	c.daemons = append(c.daemons, d)
	return d
}

// run starts the process with args and waits for its ready file.
func (d *daemon) run(args []string) {
	d.t.Helper()
	if err := d.start(args); err != nil {
		d.t.Fatal(err)
	}
}

// start starts the process with args, without the witness client of the
// process before, and waits for its ready file (testutil.Daemon.Start).
func (d *daemon) start(args []string) error {
	d.t.Helper()
	d.mu.Lock()
	d.witnessC = nil
	d.mu.Unlock()
	return d.Start(args...)
}

// restart runs the daemon again on the addresses it had, as a supervisor
// restarting it would, and as a supervisor does it starts it again while
// it exits because one of its ports is in use: between the kill and the
// restart, a socket of a test running in parallel may have been given one
// of them as its ephemeral port.
func (d *daemon) restart() {
	d.t.Helper()
	info := d.Info()
	args := append(append([]string(nil), d.args...), "--socket-addr", info.Socket, "--gossip-addr", info.Gossip,
		"--data-addr", info.Data, "--metrics-addr", info.Metrics)
	deadline := time.Now().Add(testutil.DaemonStartTimeout)
	for {
		err := d.start(args)
		if err == nil {
			return
		}
		var exited *testutil.ExitedError
		if !errors.As(err, &exited) || !strings.Contains(exited.Output, "address already in use") || time.Now().After(deadline) {
			d.t.Fatal(err)
		}
		d.t.Logf("restart of %s failed, starting it again: %v", d.Name(), err)
	}
}

// witness returns the daemon's witness client, connecting it on first use:
// a listener on the introspection scope, which therefore receives the
// Hellos the daemon's other clients publish once the daemon learnt them.
func (d *daemon) witness(t *testing.T) *client {
	d.mu.Lock()
	w := d.witnessC
	d.mu.Unlock()
	if w != nil {
		return w
	}
	w = dial(t, d, d.Name()+"/witness")
	w.announce(notification.NewParticipantID(), rsbsocket.IntrospectionScope.String())
	d.mu.Lock()
	d.witnessC = w
	d.mu.Unlock()
	return w
}

// printConfig runs the daemon's command line with --print-config and
// returns what it prints.
func (d *daemon) printConfig() string {
	d.t.Helper()
	out, err := d.Command(append(append([]string(nil), d.args...), "--print-config")...).Output()
	if err != nil {
		d.t.Fatalf("%s --print-config: %v\n%s", d.Name(), err, out)
	}
	return string(out)
}

// waitPeers waits until every daemon of the cluster sees all the others.
func (c *cluster) waitPeers(timeout time.Duration) time.Duration {
	c.t.Helper()
	want := float64(len(c.daemons) - 1)
	return testutil.WaitFor(c.t, timeout, "cluster formed", func() bool {
		for _, d := range c.daemons {
			if d.Metric("rsbd_peers") != want {
				return false
			}
		}
		return true
	})
}
