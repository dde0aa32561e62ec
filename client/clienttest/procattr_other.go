//go:build !linux

package clienttest

import "syscall"

// procAttr has nothing to add where the parent-death signal does not exist.
func procAttr() *syscall.SysProcAttr { return nil }
