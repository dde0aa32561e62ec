package main

import "syscall"

// dieWithParent makes a child process die when the bench does.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
