package transport

import "golang.org/x/sys/unix"

// readable reports whether the socket has a datagram queued (SIOCINQ).
func (s *spinner) readable() bool {
	n := 0
	err := s.rc.Control(func(fd uintptr) {
		if v, e := unix.IoctlGetInt(int(fd), unix.SIOCINQ); e == nil {
			n = v
		}
	})
	return err == nil && n > 0
}
