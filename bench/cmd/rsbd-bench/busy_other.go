//go:build !linux

package main

import "syscall"

// dieWithParent asks nothing more of a child process where the system has
// no parent-death signal: the bench kills its load processes itself.
func dieWithParent() *syscall.SysProcAttr { return nil }
