package brokertest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
)

// nodeDirEnv names the directory in which TestRabbitMQHelperNode starts a
// node; it is set only for the child test binary.
const nodeDirEnv = "BROKERTEST_NODE_DIR"

// leftoverWait bounds the wait for a node's processes to go.
const leftoverWait = 60 * time.Second

// marker returns the environment entry every process of r carries, the
// port mappers and helpers it starts too.
func (r *RabbitMQ) marker() string {
	for _, kv := range r.env {
		if strings.HasPrefix(kv, "RABBITMQ_NODENAME=") {
			return kv
		}
	}
	return ""
}

// processes returns the ids of the live processes whose environment holds
// marker, with their command lines.
func processes(marker string) map[int]string {
	found := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, append([]byte(marker), 0)) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue // exited, waiting for its parent
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		found[pid] = string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
	}
	return found
}

// noneLeft waits until no process carries marker; when some stay, it
// kills them, so the host stays clean, and fails.
func noneLeft(t *testing.T, marker string) {
	t.Helper()
	var left map[int]string
	testutil.WaitForMsg(t, leftoverWait, func() string {
		for pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return "the node's processes gone, left: " + strings.TrimSpace(strings.ReplaceAll(strings.Join(cmdlines(left), "; "), "\n", " "))
	}, func() bool {
		left = processes(marker)
		return len(left) == 0
	})
}

// cmdlines returns the command lines of a process map.
func cmdlines(m map[int]string) []string {
	out := make([]string, 0, len(m))
	for pid, cmd := range m {
		out = append(out, strconv.Itoa(pid)+" "+cmd)
	}
	return out
}

func TestRabbitMQStopLeavesNothingBehind(t *testing.T) {
	testutil.Program(t, "rabbitmq-server", "rabbitmq-server", rabbitBin)
	r, err := StartRabbitMQ(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if n := len(processes(r.marker())); n < 2 {
		t.Fatalf("%d processes carry %s, want the node and its port mapper", n, r.marker())
	}
	r.Restart(t)
	dial(t, r.Addr())
	r.Stop()
	noneLeft(t, r.marker())
}

// TestRabbitMQHelperNode starts a node and waits to be killed, as the
// child test binary of TestRabbitMQDiesWithTheTestBinary.
func TestRabbitMQHelperNode(t *testing.T) {
	dir := os.Getenv(nodeDirEnv)
	if dir == "" {
		t.Skip("runs as the child of TestRabbitMQDiesWithTheTestBinary")
	}
	r, err := StartRabbitMQ(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if err := os.WriteFile(filepath.Join(dir, "marker"), []byte(r.marker()), 0o600); err != nil {
		t.Fatal(err)
	}
	<-t.Context().Done()
}

// TestRabbitMQDiesWithTheTestBinary kills a test binary that runs a node
// with SIGKILL, as a test timeout or a crash ends it without cleanup: the
// node and its port mapper die with it, and no port mapper of the node's
// own making lives on.
func TestRabbitMQDiesWithTheTestBinary(t *testing.T) {
	testutil.Program(t, "rabbitmq-server", "rabbitmq-server", rabbitBin)
	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestRabbitMQHelperNode$", "-test.timeout=10m")
	child.Env = append(os.Environ(), nodeDirEnv+"="+dir)
	var out lockedBuffer
	child.Stdout, child.Stderr = &out, &out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = child.Wait(); close(exited) }()
	defer func() { _ = child.Process.Kill(); <-exited }()
	var marker []byte
	testutil.WaitForMsg(t, readyTimeout, func() string { return "the child's node started: " + tail(out.String()) }, func() bool {
		marker, _ = os.ReadFile(filepath.Join(dir, "marker"))
		return len(marker) > 0
	})
	if n := len(processes(string(marker))); n < 2 {
		t.Fatalf("%d processes carry %s, want the node and its port mapper", n, marker)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	noneLeft(t, string(marker))
}
