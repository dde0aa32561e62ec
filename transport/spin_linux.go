package transport

import "golang.org/x/sys/unix"

// readable reports whether the socket has a datagram queued (SIOCINQ). It
// allocates nothing: it is called in a loop while the reader polls.
func (s *spinner) readable() bool {
	if s.inqFn == nil {
		s.inqFn = func(fd uintptr) {
			if v, e := unix.IoctlGetInt(int(fd), unix.SIOCINQ); e == nil {
				s.inq = v
			}
		}
	}
	s.inq = 0
	err := s.rc.Control(s.inqFn)
	return err == nil && s.inq > 0
}
