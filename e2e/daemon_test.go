package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/syncbuf"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
)

// Deadlines of the harness: generous, since two cores run the race-detected
// test binary and several daemons at once.
const (
	startTimeout = 20 * time.Second // until a daemon wrote its ready file
	stopTimeout  = 15 * time.Second // SIGTERM until exit, before SIGKILL
	pollEvery    = 10 * time.Millisecond
	logTailLines = 60 // log lines of each daemon shown when a test fails
	// stackTailLines is how much of a hung daemon's goroutine dump is shown.
	stackTailLines = 1500
)

// readyInfo is the ready file rsbd writes once serving (--ready-file).
type readyInfo struct {
	PID    int    `json:"pid"`
	Socket string `json:"socket"`
	// SocketPath is the daemon's Unix socket (--socket-path), if any.
	SocketPath string `json:"socket_path"`
	Gossip     string `json:"gossip"`
	Data       string `json:"data"`
	Metrics    string `json:"metrics"`
}

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

// daemon is one rsbd process of a test.
type daemon struct {
	t     testing.TB
	name  string
	dir   string
	netns string // network namespace the daemon runs in; "" for the test's
	args  []string
	env   []string
	logs  *syncbuf.Buffer
	info  readyInfo

	mu       sync.Mutex
	witnessC *client // see witness; reset when the process restarts
	cmd      *exec.Cmd
	exited   chan struct{}
	err      error // from Wait, set before exited closes
}

// start runs a daemon named name on loopback ports the kernel picks, with
// the fast local memberlist profile, joined to the cluster's first daemon.
func (c *cluster) start(name string, o opts) *daemon {
	c.t.Helper()
	d := &daemon{t: c.t, name: name, dir: c.t.TempDir(), netns: o.netns, logs: &syncbuf.Buffer{}}
	d.args = []string{"--local", "--name", name, "--group-pool", c.pool,
		"--socket-addr", "127.0.0.1:0", "--gossip-addr", "127.0.0.1:0", "--data-addr", "127.0.0.1:0",
		"--metrics-addr", "127.0.0.1:0", "--ready-file", filepath.Join(d.dir, "ready.json"), "--log-format", "json"}
	if o.netns != "" {
		d.args = []string{"--local", "--name", name, "--group-pool", c.pool, "--interface", "eth0",
			"--socket-addr", "off", "--socket-path", filepath.Join(d.dir, "rsbd.sock"),
			"--gossip-addr", o.ip + ":7946", "--data-addr", o.ip + ":0", "--advertise-addr", o.ip + ":7946",
			"--metrics-addr", "off", "--ready-file", filepath.Join(d.dir, "ready.json"), "--log-format", "json"}
	}
	if len(c.daemons) > 0 && !o.solo {
		d.args = append(d.args, "--join", c.daemons[0].info.Gossip)
	}
	d.args = append(d.args, o.args...)
	conf := filepath.Join(d.dir, "rsb.conf")
	if err := os.WriteFile(conf, []byte("# "+name+"\n"+o.conf), 0o600); err != nil {
		c.t.Fatal(err)
	}
	// Only the test's configuration: no RSB_* of the caller, no real files.
	d.env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + d.dir, "RSB_CONFIG_FILES=" + conf}, o.env...)
	d.run(d.args)
	c.daemons = append(c.daemons, d)
	c.t.Cleanup(d.cleanup)
	return d
}

// run starts the process with args and waits for its ready file.
func (d *daemon) run(args []string) {
	d.t.Helper()
	if err := d.start(args); err != nil {
		d.t.Fatal(err)
	}
}

// errExited is start's error for a daemon that exited before it was ready.
var errExited = errors.New("exited before it was ready")

// start starts the process with args and waits for its ready file. A
// daemon that exits first is an error wrapping errExited, with what it
// printed; one that is not ready in time fails the test.
func (d *daemon) start(args []string) error {
	d.t.Helper()
	ready := filepath.Join(d.dir, "ready.json")
	os.Remove(ready)
	cmd := exec.Command(rsbdBin, args...)
	if d.netns != "" {
		cmd = exec.Command("ip", append([]string{"netns", "exec", d.netns, rsbdBin}, args...)...)
	}
	printed := len(d.logs.String())
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = d.dir, d.env, d.logs, d.logs
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		d.t.Fatalf("%s: %v", d.name, err)
	}
	exited := make(chan struct{})
	d.mu.Lock()
	d.cmd, d.exited, d.witnessC = cmd, exited, nil
	d.mu.Unlock()
	go func() {
		err := cmd.Wait()
		d.mu.Lock()
		d.err = err
		d.mu.Unlock()
		close(exited)
	}()
	deadline := time.Now().Add(startTimeout)
	for {
		if b, err := os.ReadFile(ready); err == nil && json.Unmarshal(b, &d.info) == nil && d.info.PID == cmd.Process.Pid {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s %w (%v):\n%s", d.name, errExited, d.err, d.logs.String()[printed:])
		case <-time.After(pollEvery):
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("%s not ready after %v:\n%s", d.name, startTimeout, d.stacks(exited))
		}
	}
}

// stacks asks a daemon that hangs for its goroutines (SIGQUIT makes the Go
// runtime print them and exit) and returns the end of its output.
func (d *daemon) stacks(exited <-chan struct{}) string {
	d.signal(syscall.SIGQUIT)
	select {
	case <-exited:
	case <-time.After(stopTimeout):
	}
	return d.logs.Tail(stackTailLines)
}

// restart runs the daemon again on the addresses it had, as a supervisor
// restarting it would, and as a supervisor does it starts it again while
// it exits because one of its ports is in use: between the kill and the
// restart, a socket of a test running in parallel may have been given one
// of them as its ephemeral port.
func (d *daemon) restart() {
	d.t.Helper()
	args := append(append([]string(nil), d.args...), "--socket-addr", d.info.Socket, "--gossip-addr", d.info.Gossip,
		"--data-addr", d.info.Data, "--metrics-addr", d.info.Metrics)
	deadline := time.Now().Add(startTimeout)
	for {
		err := d.start(args)
		if err == nil {
			return
		}
		if !errors.Is(err, errExited) || !strings.Contains(err.Error(), "address already in use") || time.Now().After(deadline) {
			d.t.Fatal(err)
		}
		d.t.Logf("restart of %s failed, starting it again: %v", d.name, err)
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
	w = dial(t, d, d.name+"/witness")
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
	cmd := exec.Command(rsbdBin, append(append([]string(nil), d.args...), "--print-config")...)
	cmd.Dir, cmd.Env = d.dir, d.env
	out, err := cmd.Output()
	if err != nil {
		d.t.Fatalf("%s --print-config: %v\n%s", d.name, err, out)
	}
	return string(out)
}

// kill sends SIGKILL and waits for the process to die.
func (d *daemon) kill() {
	d.t.Helper()
	d.signal(syscall.SIGKILL)
	if _, ok := d.wait(stopTimeout); !ok {
		d.t.Fatalf("%s survived SIGKILL", d.name)
	}
}

// terminate sends SIGTERM and returns the exit code and how long the exit
// took; ok is false if the daemon did not exit within stopTimeout.
func (d *daemon) terminate() (code int, took time.Duration, ok bool) {
	start := time.Now()
	d.signal(syscall.SIGTERM)
	code, ok = d.wait(stopTimeout)
	return code, time.Since(start), ok
}

func (d *daemon) signal(sig syscall.Signal) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cmd.Process.Signal(sig)
}

// wait waits up to timeout for the process to exit and returns its code.
func (d *daemon) wait(timeout time.Duration) (int, bool) {
	d.mu.Lock()
	exited, cmd := d.exited, d.cmd
	d.mu.Unlock()
	select {
	case <-exited:
		return cmd.ProcessState.ExitCode(), true
	case <-time.After(timeout):
		return -1, false
	}
}

// cleanup stops the daemon at the end of the test and shows its last log
// lines if the test failed.
func (d *daemon) cleanup() {
	if _, _, ok := d.terminate(); !ok {
		d.signal(syscall.SIGKILL)
		d.wait(stopTimeout)
	}
	if d.t.Failed() {
		d.t.Logf("--- last log lines of %s:\n%s", d.name, d.logs.Tail(logTailLines))
	}
}

// get fetches path from the daemon's HTTP endpoints.
func (d *daemon) get(path string) (int, string, error) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + d.info.Metrics + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// metrics scrapes /metrics into series ("name" or `name{label="v"}`) and values.
func (d *daemon) metrics() map[string]float64 {
	d.t.Helper()
	code, body, err := d.get("/metrics")
	if err != nil || code != http.StatusOK {
		d.t.Fatalf("%s: /metrics: %d %v", d.name, code, err)
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); i > 0 && err == nil {
			m[line[:i]] = v
		}
	}
	return m
}

// metric returns one series of /metrics (0 when absent).
func (d *daemon) metric(series string) float64 {
	d.t.Helper()
	return d.metrics()[series]
}

// logged reports whether a log line contains every one of parts.
func (d *daemon) logged(parts ...string) bool {
	for _, line := range strings.Split(d.logs.String(), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

// waitPeers waits until every daemon of the cluster sees all the others.
func (c *cluster) waitPeers(timeout time.Duration) time.Duration {
	c.t.Helper()
	want := float64(len(c.daemons) - 1)
	return testutil.WaitFor(c.t, timeout, "cluster formed", func() bool {
		for _, d := range c.daemons {
			if d.metric("rsbd_peers") != want {
				return false
			}
		}
		return true
	})
}
