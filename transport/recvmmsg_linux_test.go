package transport

import (
	"net"
	"net/netip"
	"testing"
	"unsafe"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// TestBatchReader: recvmmsg fills the buffers with the datagrams queued,
// in order, with their lengths and sources, and reading allocates nothing.
func TestBatchReader(t *testing.T) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	src, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]ipv4.Message, 4)
	for i := range ms {
		ms[i].Buffers = [][]byte{make([]byte, 65)}
		ms[i].OOB = make([]byte, oobSize)
	}
	from := make([]netip.AddrPort, len(ms))
	b := newBatchReader(rc, ms)
	dst := c.LocalAddr().(*net.UDPAddr).AddrPort()
	want := src.LocalAddr().(*net.UDPAddr).AddrPort()
	for _, p := range []string{"a", "bb", "ccc"} {
		if _, err := src.WriteToUDPAddrPort([]byte(p), dst); err != nil {
			t.Fatal(err)
		}
	}
	got := 0
	for got < 3 {
		n, err := b.fill(ms[got:], from[got:])
		if err != nil {
			t.Fatal(err)
		}
		got += n
	}
	for i, p := range []string{"a", "bb", "ccc"} {
		if string(ms[i].Buffers[0][:ms[i].N]) != p || from[i] != want {
			t.Fatalf("datagram %d: %q from %v, want %q from %v", i, ms[i].Buffers[0][:ms[i].N], from[i], p, want)
		}
	}
	payload := []byte("x")
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := src.WriteToUDPAddrPort(payload, dst); err != nil {
			t.Fatal(err)
		}
		if n, err := b.fill(ms, from); err != nil || n != 1 {
			t.Fatalf("read %d, %v", n, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a send and a batch read allocate %v times", allocs)
	}
	// A datagram larger than the buffer comes back cut to it: the reader
	// counts it as oversize by its length.
	if _, err := src.WriteToUDPAddrPort(make([]byte, 200), dst); err != nil {
		t.Fatal(err)
	}
	if n, err := b.fill(ms, from); err != nil || n != 1 || ms[0].N != 65 {
		t.Fatalf("oversize: read %d, length %d, %v", n, ms[0].N, err)
	}
	c.Close()
	if _, err := b.fill(ms, from); err == nil {
		t.Fatal("a read of a closed socket reported no error")
	}
}

// TestSockaddrAddrPort decodes the kernel's IPv4 and IPv6 sockaddrs (port
// in network order) and gives nothing for another family or a short one.
func TestSockaddrAddrPort(t *testing.T) {
	var sa unix.RawSockaddrAny
	in4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(&sa))
	in4.Family, in4.Addr = unix.AF_INET, [4]byte{10, 1, 2, 3}
	*(*[2]byte)(unsafe.Pointer(&in4.Port)) = [2]byte{0x1f, 0x90}
	if got := sockaddrAddrPort(&sa, unix.SizeofSockaddrInet4); got != netip.MustParseAddrPort("10.1.2.3:8080") {
		t.Fatalf("IPv4: %v", got)
	}
	if got := sockaddrAddrPort(&sa, 2); got.IsValid() {
		t.Fatalf("a short IPv4 sockaddr gives %v", got)
	}
	sa = unix.RawSockaddrAny{}
	in6 := (*unix.RawSockaddrInet6)(unsafe.Pointer(&sa))
	in6.Family, in6.Addr = unix.AF_INET6, netip.MustParseAddr("fe80::1").As16()
	*(*[2]byte)(unsafe.Pointer(&in6.Port)) = [2]byte{0x00, 0x35}
	if got := sockaddrAddrPort(&sa, unix.SizeofSockaddrInet6); got != netip.MustParseAddrPort("[fe80::1]:53") {
		t.Fatalf("IPv6: %v", got)
	}
	sa = unix.RawSockaddrAny{}
	sa.Addr.Family = unix.AF_UNIX
	if got := sockaddrAddrPort(&sa, unix.SizeofSockaddrAny); got.IsValid() {
		t.Fatalf("AF_UNIX gives %v", got)
	}
}
