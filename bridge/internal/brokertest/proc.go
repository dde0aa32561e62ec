package brokertest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ErrNotReady: a broker did not accept connections within readyTimeout,
// or exited first.
var ErrNotReady = errors.New("brokertest: broker not ready")

// proc is a started program: its command, its output and the channel that
// closes when it exits.
type proc struct {
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan struct{}
}

// lockedBuffer is an output buffer the process writes while tests read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start runs cmd in a process group of its own with its output collected;
// the child is killed when the test binary dies. A broker's start script
// forks the server, so kill signals the whole group.
func start(cmd *exec.Cmd) (*proc, error) {
	p := &proc{cmd: cmd, out: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// kill stops the process group with sig and waits for the process to
// exit; the rest of the group gets SIGKILL then.
func (p *proc) kill(sig syscall.Signal) error {
	pgid := -p.cmd.Process.Pid
	defer func() { _ = syscall.Kill(pgid, syscall.SIGKILL) }()
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = syscall.Kill(pgid, sig)
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("brokertest: %s ignored %v", p.cmd.Path, sig)
	}
}

// waitPort polls addr until it accepts a TCP connection, the process exits
// or readyTimeout passes.
func (p *proc) waitPort(addr string) error {
	deadline := time.Now().Add(readyTimeout)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%w: %s exited: %s", ErrNotReady, p.cmd.Path, tail(p.out.String()))
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s not listening on %s after %v: %s", ErrNotReady, p.cmd.Path, addr, readyTimeout, tail(p.out.String()))
		}
	}
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// hostPort joins the loopback address and port.
func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// tail returns the last lines of a program's output for an error.
func tail(s string) string {
	const max = 2000
	if len(s) > max {
		return "…" + s[len(s)-max:]
	}
	return s
}
