//go:build !linux

package e2e

import "syscall"

// procAttr has nothing to add outside Linux; the tests' cleanups stop the
// daemons.
func procAttr() *syscall.SysProcAttr { return nil }
