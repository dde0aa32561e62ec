package clienttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/syncbuf"
	"github.com/rsbd/rsbd/internal/testutil"
)

var (
	binMu  sync.Mutex
	binDir string
	built  = map[string]string{}
)

// Build compiles the main package pkg (an import path) once per test
// binary and returns the path of the executable.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	binMu.Lock()
	defer binMu.Unlock()
	if p, ok := built[pkg]; ok {
		return p
	}
	if binDir == "" {
		dir, err := os.MkdirTemp("", "rsbd-clienttest-")
		if err != nil {
			t.Fatal(err)
		}
		binDir = dir
	}
	out := filepath.Join(binDir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	built[pkg] = out
	return out
}

// RemoveBinaries deletes what Build produced.
func RemoveBinaries() {
	binMu.Lock()
	defer binMu.Unlock()
	if binDir != "" {
		os.RemoveAll(binDir)
		binDir, built = "", map[string]string{}
	}
}

// Daemon is one rsbd process.
type Daemon struct {
	// SocketAddr is the RSB socket server's address (host:port).
	SocketAddr string `json:"socket"`
	// GossipAddr is the memberlist address.
	GossipAddr string `json:"gossip"`
	// MetricsAddr is the HTTP address of /metrics.
	MetricsAddr string `json:"metrics"`
	// PID is the process id.
	PID int `json:"pid"`

	cmd    *exec.Cmd
	logs   *syncbuf.Buffer
	exited chan struct{}
}

// URI returns socket://host:port of the daemon's socket server.
func (d *Daemon) URI() string { return "socket://" + d.SocketAddr }

// StartDaemons builds cmd/rsbd and runs k daemons on loopback joined into
// one cluster, each with its own temporary directory and no RSB
// configuration of the caller. They are stopped at the end of the test.
func StartDaemons(t testing.TB, k int) []*Daemon {
	t.Helper()
	bin := Build(t, "github.com/rsbd/rsbd/cmd/rsbd")
	pool := PrivatePool()
	poolArg := fmt.Sprintf("%s:%d", pool.PoolBase, pool.PoolPort)
	var ds []*Daemon
	for i := range k {
		args := []string{"--local", "--group-pool", poolArg, "--socket-addr", "127.0.0.1:0",
			"--gossip-addr", "127.0.0.1:0", "--data-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
			"--log-level", "warn", "--name", fmt.Sprintf("d%d-%d", i, os.Getpid())}
		if i > 0 {
			args = append(args, "--join", ds[0].GossipAddr)
		}
		ds = append(ds, startDaemon(t, bin, args))
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
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + d.MetricsAddr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "rsbd_peers "); ok {
			if n, err := strconv.ParseFloat(v, 64); err == nil {
				return int(n)
			}
		}
	}
	return -1
}

// startDaemon runs one daemon and waits for its ready file.
func startDaemon(t testing.TB, bin string, args []string) *Daemon {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "rsb.conf")
	if err := os.WriteFile(conf, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(dir, "ready.json")
	d := &Daemon{logs: &syncbuf.Buffer{}, exited: make(chan struct{})}
	d.cmd = exec.Command(bin, append(args, "--ready-file", ready)...)
	d.cmd.Dir = dir
	d.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "RSB_CONFIG_FILES=" + conf}
	d.cmd.Stdout, d.cmd.Stderr = d.logs, d.logs
	d.cmd.SysProcAttr = procAttr()
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.cmd.Wait(); close(d.exited) }()
	t.Cleanup(func() { d.stop(t) })
	deadline := time.Now().Add(DaemonStartTimeout)
	for {
		if b, err := os.ReadFile(ready); err == nil && json.Unmarshal(b, d) == nil && d.PID == d.cmd.Process.Pid {
			return d
		}
		select {
		case <-d.exited:
			t.Fatalf("rsbd exited before it was ready:\n%s", d.logs)
		case <-time.After(pollInterval):
		}
		if time.Now().After(deadline) {
			t.Fatalf("rsbd not ready after %v:\n%s", DaemonStartTimeout, d.logs)
		}
	}
}

// stop terminates the daemon (SIGTERM, then SIGKILL) and shows its logs if
// the test failed.
func (d *Daemon) stop(t testing.TB) {
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(DaemonStopTimeout):
		d.cmd.Process.Kill()
		<-d.exited
	}
	if t.Failed() {
		t.Logf("rsbd %s logs:\n%s", d.SocketAddr, d.logs)
	}
}
