//go:build !linux

package testutil

import "syscall"

// procAttr has nothing to add where the parent-death signal does not
// exist; the tests' cleanups stop the daemons.
func procAttr() *syscall.SysProcAttr { return nil }
