//go:build !linux

package bridgetest

import "syscall"

// procAttr has nothing to add outside Linux: the test's cleanup kills the
// server.
func procAttr() *syscall.SysProcAttr { return nil }
