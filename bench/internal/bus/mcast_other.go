//go:build !linux

package bus

import "syscall"

// mcastControl sets nothing outside Linux: IP_MULTICAST_ALL is Linux's.
func mcastControl(_, _ string, _ syscall.RawConn) error { return nil }
