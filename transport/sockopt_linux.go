package transport

import (
	"encoding/binary"
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// controlFunc returns the net.ListenConfig Control hook that sets socket
// options before bind. Every socket gets IP_MULTICAST_ALL=0 (receive only
// the groups joined on this very socket, not every group joined on the host
// at this port) and SO_RXQ_OVFL (the kernel reports its receive buffer drops
// with each datagram). Multicast receive sockets also get SO_REUSEADDR and
// SO_REUSEPORT so several daemons, and several sockets of one daemon, can
// bind the same group port.
func controlFunc(shared bool) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			s := int(fd)
			opts := []struct{ level, name, value int }{
				{unix.IPPROTO_IP, unix.IP_MULTICAST_ALL, 0},
				{unix.SOL_SOCKET, unix.SO_RXQ_OVFL, 1},
			}
			if shared {
				opts = append(opts,
					struct{ level, name, value int }{unix.SOL_SOCKET, unix.SO_REUSEADDR, 1},
					struct{ level, name, value int }{unix.SOL_SOCKET, unix.SO_REUSEPORT, 1})
			}
			for _, o := range opts {
				if err := unix.SetsockoptInt(s, o.level, o.name, o.value); err != nil {
					serr = errors.Join(serr, err)
				}
			}
		})
		return errors.Join(err, serr)
	}
}

// forceBuffers asks for socket buffers of size bytes past the system's
// net.core.rmem_max and wmem_max (SO_RCVBUFFORCE, SO_SNDBUFFORCE), which
// a process with CAP_NET_ADMIN may do. Without the capability the sizes
// SO_RCVBUF and SO_SNDBUF granted stay; that is not an error.
func forceBuffers(c syscall.RawConn, size int) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		for _, opt := range []int{unix.SO_RCVBUFFORCE, unix.SO_SNDBUFFORCE} {
			if err := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, opt, size); err != nil && !errors.Is(err, unix.EPERM) {
				serr = errors.Join(serr, err)
			}
		}
	})
	return errors.Join(err, serr)
}

// bufferSizes returns the SO_RCVBUF and SO_SNDBUF sizes the kernel granted.
func bufferSizes(c syscall.RawConn) (rcv, snd int, err error) {
	var rerr, serr error
	err = c.Control(func(fd uintptr) {
		rcv, rerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
		snd, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
	})
	return rcv, snd, errors.Join(err, rerr, serr)
}

// isGroupLimit reports whether a join failed because the socket holds the
// most groups the kernel allows (net.ipv4.igmp_max_memberships).
func isGroupLimit(err error) bool { return errors.Is(err, unix.ENOBUFS) }

// kernelDrops parses the SO_RXQ_OVFL control message: the number of
// datagrams the kernel dropped on this socket so far because its receive
// buffer was full. It returns false if the message is absent or malformed.
func kernelDrops(oob []byte) (uint32, bool) {
	hdr := unix.CmsgLen(0)
	for len(oob) >= hdr {
		var n int
		if unix.SizeofCmsghdr == 16 {
			n = int(binary.NativeEndian.Uint64(oob))
		} else {
			n = int(binary.NativeEndian.Uint32(oob))
		}
		if n < hdr || n > len(oob) {
			return 0, false
		}
		level := int32(binary.NativeEndian.Uint32(oob[unix.SizeofCmsghdr-8:]))
		typ := int32(binary.NativeEndian.Uint32(oob[unix.SizeofCmsghdr-4:]))
		if level == unix.SOL_SOCKET && typ == unix.SO_RXQ_OVFL && n >= hdr+4 {
			return binary.NativeEndian.Uint32(oob[hdr:]), true
		}
		next := unix.CmsgSpace(n - hdr)
		if next >= len(oob) {
			break
		}
		oob = oob[next:]
	}
	return 0, false
}
