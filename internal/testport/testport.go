package testport

import (
	"net"
	"strconv"
	"testing"
)

// holdTries bounds the search for a port free for both TCP and UDP.
const holdTries = 20

// Hold returns a loopback address ("127.0.0.1:PORT") whose port it holds
// with a TCP listener and a UDP socket until release is called (release is
// idempotent; the test's cleanup calls it too). The listener never accepts:
// a connection to it is left unanswered, as by a peer that is not up yet.
func Hold(tb testing.TB) (addr string, port int, release func()) {
	tb.Helper()
	for range holdTries {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			_ = ln.Close()
			continue
		}
		release = func() { _ = ln.Close(); _ = pc.Close() }
		tb.Cleanup(release)
		return ln.Addr().String(), port, release
	}
	tb.Fatal("no loopback port free for both TCP and UDP")
	return "", 0, nil
}
