package testutil

import (
	"syscall"
	"time"
)

// Signal sends sig to the daemon's process, if one was started.
func (d *Daemon) Signal(sig syscall.Signal) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.proc != nil {
		d.proc.cmd.Process.Signal(sig)
	}
}

// Wait waits up to timeout for the daemon's process to exit and returns its
// exit code (-1 when a signal ended it); ok is false if it still runs. A
// daemon never started counts as exited, with code -1.
func (d *Daemon) Wait(timeout time.Duration) (code int, ok bool) {
	d.mu.Lock()
	p := d.proc
	d.mu.Unlock()
	if p == nil {
		return -1, true
	}
	select {
	case <-p.exited: // exited already: no race with a timeout of 0
		return p.cmd.ProcessState.ExitCode(), true
	default:
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode(), true
	case <-t.C:
		return -1, false
	}
}

// Kill sends SIGKILL and waits for the process to die; the test fails if
// it survives DaemonStopTimeout.
func (d *Daemon) Kill() {
	d.t.Helper()
	d.Signal(syscall.SIGKILL)
	if _, ok := d.Wait(DaemonStopTimeout); !ok {
		d.t.Fatalf("%s survived SIGKILL", d.spec.Name)
	}
}

// Terminate sends SIGTERM and returns the exit code and how long the exit
// took; ok is false if the daemon did not exit within DaemonStopTimeout.
func (d *Daemon) Terminate() (code int, took time.Duration, ok bool) {
	start := time.Now()
	d.Signal(syscall.SIGTERM)
	code, ok = d.Wait(DaemonStopTimeout)
	return code, time.Since(start), ok
}

// Stacks asks a daemon that hangs for its goroutines (SIGQUIT makes the Go
// runtime print them and exit), waits up to DaemonStopTimeout for the exit
// and returns the last StackTailLines lines of its logs.
func (d *Daemon) Stacks() string {
	d.Signal(syscall.SIGQUIT)
	d.Wait(DaemonStopTimeout)
	return d.Tail(StackTailLines)
}
