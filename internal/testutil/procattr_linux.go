package testutil

import "syscall"

// procAttr makes the kernel kill a daemon when the test process dies, so a
// crashed or timed-out test run leaves no daemons behind.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
