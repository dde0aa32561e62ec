package bridgetest

import "syscall"

// procAttr makes the kernel kill a server when the test process dies, so a
// crashed test leaves no broker behind.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
