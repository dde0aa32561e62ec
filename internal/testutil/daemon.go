package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/syncbuf"
)

// DaemonSpec is how a test runs a daemon: everything but its command line,
// which Start takes, since a restart may change it.
type DaemonSpec struct {
	// Bin is the executable, from Build.
	Bin string
	// Name names the daemon in messages; the executable's name if empty.
	Name string
	// Conf is the content of the daemon's rsb.conf, the one configuration
	// file it reads (RSB_CONFIG_FILES); empty by default.
	Conf string
	// Env is the environment beyond PATH, HOME (the daemon's directory) and
	// RSB_CONFIG_FILES: no RSB_* variable of the caller reaches the daemon.
	Env []string
	// Netns, if set, runs the daemon in that network namespace
	// (ip netns exec NETNS), which the test set up.
	Netns string
}

// Daemon is one daemon process of a test, in a directory of its own that
// holds its rsb.conf and ready file. Start runs it, again after it exited
// if the test wants (as a supervisor would); the test's cleanup stops it.
type Daemon struct {
	t    testing.TB
	spec DaemonSpec
	dir  string
	env  []string
	logs *syncbuf.Buffer

	mu   sync.Mutex
	info ReadyInfo
	proc *process // the last process started; nil before the first Start
}

// process is one run of a daemon.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // from Wait, set before exited closes
}

// NewDaemon prepares a daemon without starting it: its directory (a
// t.TempDir), rsb.conf and environment. The test's cleanup stops whatever
// process Start runs and shows the end of its logs if the test failed.
func NewDaemon(t testing.TB, spec DaemonSpec) *Daemon {
	t.Helper()
	if spec.Name == "" {
		spec.Name = filepath.Base(spec.Bin)
	}
	d := &Daemon{t: t, spec: spec, dir: t.TempDir(), logs: &syncbuf.Buffer{}}
	if err := os.WriteFile(d.ConfFile(), []byte(spec.Conf), 0o600); err != nil {
		t.Fatal(err)
	}
	d.env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + d.dir, "RSB_CONFIG_FILES=" + d.ConfFile()}, spec.Env...)
	t.Cleanup(d.cleanup)
	return d
}

// StartDaemon prepares a daemon (NewDaemon) and runs it with args (Run).
func StartDaemon(t testing.TB, spec DaemonSpec, args ...string) *Daemon {
	t.Helper()
	d := NewDaemon(t, spec)
	d.Run(args...)
	return d
}

// Run is Start failing the test on an error.
func (d *Daemon) Run(args ...string) {
	d.t.Helper()
	if err := d.Start(args...); err != nil {
		d.t.Fatal(err)
	}
}

// Start runs the daemon with args and --ready-file and waits until it
// wrote its ready file, whose content Info returns. A daemon that exits
// first is an *ExitedError (wrapping ErrExited) with what it printed
// since; one not ready within DaemonStartTimeout fails the test with its
// goroutines (Stacks). Call it from the test's goroutine.
func (d *Daemon) Start(args ...string) error {
	d.t.Helper()
	os.Remove(d.ReadyFile())
	cmd := d.command(d.spec.Netns, args)
	printed := len(d.logs.String())
	cmd.Stdout, cmd.Stderr = d.logs, d.logs
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", d.spec.Name, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	d.mu.Lock()
	d.proc = p
	d.mu.Unlock()
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	tick := time.NewTicker(ReadyPollEvery)
	defer tick.Stop()
	deadline := time.NewTimer(DaemonStartTimeout)
	defer deadline.Stop()
	for {
		if info, ok := readReady(d.ReadyFile(), cmd.Process.Pid); ok {
			d.mu.Lock()
			d.info = info
			d.mu.Unlock()
			return nil
		}
		select {
		case <-p.exited:
			return &ExitedError{Name: d.spec.Name, Err: p.err, Output: d.logs.String()[printed:]}
		case <-deadline.C:
			d.t.Fatalf("%s not ready after %v:\n%s", d.spec.Name, DaemonStartTimeout, d.Stacks())
		case <-tick.C:
		}
	}
}

// Command returns the daemon's command line with args as Start runs it
// (executable, --ready-file, directory, environment), not started and
// outside any network namespace: for runs such as --print-config.
func (d *Daemon) Command(args ...string) *exec.Cmd { return d.command("", args) }

// command is the daemon's command line with args, in network namespace
// netns unless that is "".
func (d *Daemon) command(netns string, args []string) *exec.Cmd {
	argv := append(append([]string{d.spec.Bin}, args...), "--ready-file", d.ReadyFile())
	if netns != "" {
		argv = append([]string{"ip", "netns", "exec", netns}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = d.dir, d.env
	return cmd
}

// Name returns the daemon's name.
func (d *Daemon) Name() string { return d.spec.Name }

// Dir returns the daemon's directory: its working directory and HOME.
func (d *Daemon) Dir() string { return d.dir }

// Netns returns the network namespace the daemon runs in; "" for the
// test's own.
func (d *Daemon) Netns() string { return d.spec.Netns }

// ConfFile returns the path of the daemon's rsb.conf.
func (d *Daemon) ConfFile() string { return filepath.Join(d.dir, "rsb.conf") }

// ReadyFile returns the path Start passes to --ready-file.
func (d *Daemon) ReadyFile() string { return filepath.Join(d.dir, "ready.json") }

// Info returns the ready file of the daemon's last successful Start.
func (d *Daemon) Info() ReadyInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.info
}

// Logs returns everything the daemon's processes printed, on stdout and
// stderr.
func (d *Daemon) Logs() string { return d.logs.String() }

// Tail returns the last n lines of Logs.
func (d *Daemon) Tail(n int) string { return d.logs.Tail(n) }

// Logged reports whether a line of Logs contains every one of parts.
func (d *Daemon) Logged(parts ...string) bool {
	for line := range strings.Lines(d.logs.String()) {
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

// cleanup stops the daemon at the end of the test (SIGTERM, then SIGKILL)
// and shows its last log lines if the test failed.
func (d *Daemon) cleanup() {
	if _, _, ok := d.Terminate(); !ok {
		d.Signal(syscall.SIGKILL)
		d.Wait(DaemonStopTimeout)
	}
	if d.t.Failed() {
		d.t.Logf("--- last log lines of %s:\n%s", d.spec.Name, d.Tail(LogTailLines))
	}
}
