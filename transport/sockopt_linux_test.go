package transport

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	if unix.SizeofCmsghdr == 16 {
		binary.NativeEndian.PutUint64(b, uint64(unix.CmsgLen(len(data))))
	} else {
		binary.NativeEndian.PutUint32(b, uint32(unix.CmsgLen(len(data))))
	}
	binary.NativeEndian.PutUint32(b[unix.SizeofCmsghdr-8:], uint32(level))
	binary.NativeEndian.PutUint32(b[unix.SizeofCmsghdr-4:], uint32(typ))
	copy(b[unix.CmsgLen(0):], data)
	return b
}

func TestKernelDropsParse(t *testing.T) {
	count := binary.NativeEndian.AppendUint32(nil, 1234)
	other := cmsg(unix.IPPROTO_IP, unix.IP_TTL, []byte{1, 0, 0, 0})
	ovfl := cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, count)
	if n, ok := kernelDrops(ovfl); !ok || n != 1234 {
		t.Fatalf("alone: %d %v", n, ok)
	}
	if n, ok := kernelDrops(append(append([]byte(nil), other...), ovfl...)); !ok || n != 1234 {
		t.Fatalf("after another message: %d %v", n, ok)
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"other":     other,
		"truncated": ovfl[:len(ovfl)-5],
		"short hdr": ovfl[:3],
		"zero len":  make([]byte, 32),
	} {
		if _, ok := kernelDrops(b); ok {
			t.Errorf("%s: reported a count", name)
		}
	}
}

// TestKernelDropsCounted overflows a tiny receive buffer while the reader is
// stuck in the Handler and checks that the kernel's drops are reported.
func TestKernelDropsCounted(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	first := true
	sb := newSink()
	b := open(t, Config{SocketBuffer: 1}, func(p []Packet) {
		if first {
			first = false
			close(entered)
			<-release
		}
		sb.handle(p)
	})
	a := open(t, Config{}, func([]Packet) {})
	dst := []netip.AddrPort{unicastAddr(b)}
	mustSend(t, a, dst, []byte("first"))
	<-entered
	flood := make([][]byte, 200)
	for i := range flood {
		flood[i] = make([]byte, 1000)
	}
	mustSend(t, a, dst, flood...)
	close(release)
	// The kernel stamps its drop count on datagrams queued after the drops:
	// keep sending small ones until one carries it.
	s := waitStats(t, b, "kernel drops reported", func(s Stats) bool {
		mustSend(t, a, dst, []byte("marker"))
		return s.KernelDrops > 0
	})
	t.Logf("granted buffer %d, kernel dropped %d of 200", s.RecvBuffer, s.KernelDrops)
}

// TestSocketBuffersForced: a process allowed to (CAP_NET_ADMIN) gets the
// requested buffers past net.core.rmem_max; any other gets what rmem_max
// allows, without error.
func TestSocketBuffersForced(t *testing.T) {
	const size = 16 << 20
	e := open(t, Config{SocketBuffer: size}, newSink().handle)
	got := e.Stats().RecvBuffer
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, size) == nil {
		if got < 2*size {
			t.Fatalf("receive buffer %d, want the forced %d", got, 2*size)
		}
		return
	}
	if got <= 0 || got > 2*size {
		t.Fatalf("receive buffer %d without the capability", got)
	}
	t.Logf("not allowed to force buffers; granted %d", got)
}
