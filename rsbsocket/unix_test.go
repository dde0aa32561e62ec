package rsbsocket

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/internal/sockio"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// TestUnixAndTCPClientsShareOneServer: a server serving a TCP and a Unix
// listener forwards between clients of both, small frames and large ones
// (written directly) alike, in order, and a Unix client's orderly close is
// seen as such.
func TestUnixAndTCPClientsShareOneServer(t *testing.T) {
	rec := &recorder{}
	s, tcpAddr := startServer(t, quietConfig(), rec)
	path := filepath.Join(t.TempDir(), "rsbd.sock")
	unixLn, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(unixLn) }()

	uc := socktest.Dial(t, sockclient.UnixPrefix+path)
	testutil.WaitFor(t, socktest.Timeout, "the Unix connection", func() bool { return len(s.Connections()) == 1 })
	id := s.Connections()[0].ID
	tc := socktest.Dial(t, tcpAddr)
	testutil.WaitFor(t, socktest.Timeout, "both connections", func() bool { return len(s.Connections()) == 2 })
	frames := append(bulkFrames(t, 50, 100), bulkFrames(t, 3, 3<<20)...)
	frames = append(frames, bulkFrames(t, 10, 10)...)
	done := publish(uc, frames)
	for i, w := range frames {
		if got := socktest.Recv(t, tc); !bytes.Equal(got, w) {
			t.Fatalf("unix → tcp frame %d differs (%d bytes, want %d)", i, len(got), len(w))
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.DirectWrites == 0 {
		t.Errorf("no direct writes to the TCP client: %+v", st)
	}
	back := bulkFrames(t, 2, 1<<20)
	if err := sendAll(tc, back); err != nil {
		t.Fatal(err)
	}
	for i, w := range back {
		if got := socktest.Recv(t, uc); !bytes.Equal(got, w) {
			t.Fatalf("tcp → unix frame %d differs", i)
		}
	}
	if err := uc.Close(); err != nil {
		t.Fatalf("orderly close over the Unix socket: %v", err)
	}
	if r := rec.waitDisconnect(t, id); r != DisconnectEOF {
		t.Fatalf("disconnect reason %v, want %v", r, DisconnectEOF)
	}
}

// TestUnixBuffersGrown: both ends of a Unix socket connection get the
// larger send buffer (as far as net.core.wmem_max allows).
func TestUnixBuffersGrown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rsbd.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := serveOn(t, quietConfig(), nil, ln)
	c := socktest.Dial(t, sockclient.UnixPrefix+path)
	want := min(sockio.UnixSocketBuffer, wmemMax(t))
	if got := sendBuffer(t, c.NetConn()); got < want {
		t.Errorf("client send buffer %d, want at least %d", got, want)
	}
	testutil.WaitFor(t, socktest.Timeout, "the connection", func() bool { return len(s.Connections()) == 1 })
	s.mu.Lock()
	var srv net.Conn
	for _, sc := range s.conns {
		srv = sc.nc
	}
	s.mu.Unlock()
	if got := sendBuffer(t, srv); got < want {
		t.Errorf("server send buffer %d, want at least %d", got, want)
	}
}

// wmemMax reads net.core.wmem_max, the cap of an unprivileged SO_SNDBUF.
func wmemMax(t *testing.T) int {
	b, err := os.ReadFile("/proc/sys/net/core/wmem_max")
	if err != nil {
		t.Skipf("no wmem_max: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// sendBuffer reads SO_SNDBUF of nc (Linux reports twice the size asked for).
func sendBuffer(t *testing.T, nc net.Conn) int {
	raw, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var serr error
	if err := raw.Control(func(fd uintptr) { v, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF) }); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
	return v / 2
}
