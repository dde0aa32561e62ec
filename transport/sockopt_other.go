//go:build !linux

package transport

import (
	"errors"
	"syscall"
)

// controlFunc sets no options outside Linux: SO_REUSEPORT, IP_MULTICAST_ALL
// and SO_RXQ_OVFL are Linux semantics; rsbd's deployment target is Linux.
func controlFunc(bool) func(network, address string, c syscall.RawConn) error {
	return nil
}

// forceBuffers does nothing outside Linux.
func forceBuffers(syscall.RawConn, int) error { return nil }

// bufferSizes is unknown outside Linux.
func bufferSizes(syscall.RawConn) (rcv, snd int, err error) { return 0, 0, nil }

// isGroupLimit reports ENOBUFS, the error of a join beyond the socket's limit.
func isGroupLimit(err error) bool { return errors.Is(err, syscall.ENOBUFS) }

// kernelDrops is not available outside Linux.
func kernelDrops([]byte) (uint32, bool) { return 0, false }
