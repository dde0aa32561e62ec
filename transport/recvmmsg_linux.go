package transport

import (
	"net/netip"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// batchReader reads a batch of datagrams with recvmmsg straight into the
// reader's buffers. It does what ipv4.PacketConn.ReadBatch does without its
// allocations: ReadBatch makes a net.UDPAddr for every datagram's source,
// two allocations per datagram on the hottest path there is, where
// batchReader decodes the kernel's sockaddr into a netip.AddrPort. Its
// headers point at the reader's buffers for the reader's whole life.
type batchReader struct {
	rc     syscall.RawConn
	hdrs   []unix.Mmsghdr
	iovs   []unix.Iovec
	names  []unix.RawSockaddrAny
	oobLen []int
	// n and errno are what the last recvmmsg returned; readFn is read,
	// bound once so that a read allocates no closure.
	n      int
	errno  syscall.Errno
	readFn func(fd uintptr) bool
}

// newBatchReader prepares recvmmsg headers for ms on rc.
func newBatchReader(rc syscall.RawConn, ms []ipv4.Message) *batchReader {
	b := &batchReader{rc: rc, hdrs: make([]unix.Mmsghdr, len(ms)), iovs: make([]unix.Iovec, len(ms)),
		names: make([]unix.RawSockaddrAny, len(ms)), oobLen: make([]int, len(ms))}
	for i := range ms {
		buf := ms[i].Buffers[0]
		b.iovs[i].Base = &buf[0]
		b.iovs[i].SetLen(len(buf))
		h := &b.hdrs[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
		h.Iov = &b.iovs[i]
		h.SetIovlen(1)
		if oob := ms[i].OOB; len(oob) > 0 {
			h.Control = &oob[0]
			b.oobLen[i] = len(oob)
		}
	}
	b.readFn = b.read
	return b
}

// read makes one non-blocking recvmmsg on fd; it asks RawConn.Read to wait
// for the socket to be readable when nothing is queued.
func (b *batchReader) read(fd uintptr) bool {
	for i := range b.hdrs {
		h := &b.hdrs[i].Hdr
		h.Namelen = unix.SizeofSockaddrAny
		h.SetControllen(b.oobLen[i])
		h.Flags = 0
	}
	for {
		n, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.hdrs[0])), uintptr(len(b.hdrs)),
			unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		b.n, b.errno = int(n), e
		return true
	}
}

// fill reads up to len(ms) datagrams into ms, their sources into from.
func (b *batchReader) fill(ms []ipv4.Message, from []netip.AddrPort) (int, error) {
	if err := b.rc.Read(b.readFn); err != nil {
		return 0, err
	}
	if b.errno != 0 {
		return 0, os.NewSyscallError("recvmmsg", b.errno)
	}
	for i := range b.n {
		h := &b.hdrs[i]
		ms[i].N, ms[i].NN, ms[i].Flags = int(h.Len), int(h.Hdr.Controllen), int(h.Hdr.Flags)
		from[i] = sockaddrAddrPort(&b.names[i], h.Hdr.Namelen)
	}
	return b.n, nil
}

// sockaddrAddrPort decodes an AF_INET or AF_INET6 sockaddr of namelen
// bytes; anything else is the zero AddrPort.
func sockaddrAddrPort(sa *unix.RawSockaddrAny, namelen uint32) netip.AddrPort {
	switch {
	case sa.Addr.Family == unix.AF_INET && namelen >= unix.SizeofSockaddrInet4:
		in := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		p := (*[2]byte)(unsafe.Pointer(&in.Port))
		return netip.AddrPortFrom(netip.AddrFrom4(in.Addr), uint16(p[0])<<8|uint16(p[1]))
	case sa.Addr.Family == unix.AF_INET6 && namelen >= unix.SizeofSockaddrInet6:
		in := (*unix.RawSockaddrInet6)(unsafe.Pointer(sa))
		p := (*[2]byte)(unsafe.Pointer(&in.Port))
		return netip.AddrPortFrom(netip.AddrFrom16(in.Addr), uint16(p[0])<<8|uint16(p[1]))
	}
	return netip.AddrPort{}
}
