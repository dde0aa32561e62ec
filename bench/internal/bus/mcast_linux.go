package bus

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// mcastControl turns IP_MULTICAST_ALL off before bind, so that a socket
// receives only the groups joined on it, not every group joined on the host
// at its port.
func mcastControl(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MULTICAST_ALL, 0)
	}); err != nil {
		return err
	}
	return serr
}
