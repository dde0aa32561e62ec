//go:build !linux

package transport

import (
	"net/netip"
	"syscall"

	"golang.org/x/net/ipv4"
)

// batchReader is not used where recvmmsg is not: the reader falls back to
// ipv4.PacketConn.ReadBatch.
type batchReader struct{}

// newBatchReader returns nil: no batch reader here.
func newBatchReader(syscall.RawConn, []ipv4.Message) *batchReader { return nil }

// fill is never called on a nil batchReader.
func (*batchReader) fill([]ipv4.Message, []netip.AddrPort) (int, error) { return 0, nil }
