package e2e

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// garbageDatagrams is how many random datagrams go to the data port.
const garbageDatagrams = 200

// garbageCounters are the series TestGarbageOnEveryListener expects to
// grow, each with the least it must grow by; "a+b" names a sum of series.
var garbageCounters = map[string]float64{
	`rsbd_socket_disconnects_total{reason="frame_too_large"}`: 1,
	`rsbd_drops_total{reason="frame_too_large"}`:              1,
	`rsbd_socket_disconnects_total{reason="malformed"}`:       2, // on TCP and on the Unix socket
	`rsbd_socket_disconnects_total{reason="read_error"}`:      1, // a frame cut short
	// Random datagrams are too short to decode, or name a group nobody
	// here wants (dropped before decoding), or fail to decode.
	`rsbd_drops_total{reason="decode_error"}+rsbd_drops_total{reason="not_interested"}`: garbageDatagrams / 2,
	`rsbd_membership_drops_total{reason="gossip_malformed"}`:                            2,
	`rsbd_http_rejected_total{reason="no_request"}`:                                     2,
	`rsbd_http_rejected_total{reason="not_found"}`:                                      1,
}

// TestGarbageOnEveryListener throws garbage at every listener of a
// running daemon A: frames too large, undecodable and cut short on the
// socket server's TCP port and Unix socket, random datagrams at its data
// port, random packets and a random stream at its gossip port, and
// malformed, oversized and misdirected requests at its metrics endpoint.
// A keeps running, each drop shows in its counter, and afterwards A still
// serves: an event from daemon B reaches A's subscriber, and new clients
// on both of A's sockets publish to it.
func TestGarbageOnEveryListener(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("A", opts{args: []string{"--socket-path", filepath.Join(t.TempDir(), "a.sock")}})
	b := c.start("B", opts{})
	c.waitPeers(20 * time.Second)
	pub, sub := dial(t, b, "B/pub"), dial(t, a, "A/sub")
	sub.listen("/g/")
	waitRoute(t, 20*time.Second, pub, "/g/", sub)
	before := a.Metrics()
	info := a.Info()

	for _, g := range []struct {
		network, addr string
		frame         []byte
	}{
		{"tcp", info.Socket, binary.LittleEndian.AppendUint32(nil, 1<<31)},                  // far above the frame limit
		{"tcp", info.Socket, append(binary.LittleEndian.AppendUint32(nil, 8), garbage8...)}, // not a Notification
		{"unix", info.SocketPath, append(binary.LittleEndian.AppendUint32(nil, 8), garbage8...)},
		{"tcp", info.Socket, append(binary.LittleEndian.AppendUint32(nil, 1000), garbage8...)}, // cut short
	} {
		socketGarbage(t, g.network, g.addr, g.frame)
	}
	udpGarbage(t, info.Data, garbageDatagrams)
	udpGarbage(t, info.Gossip, 20)
	tcpGarbage(t, info.Gossip)
	for _, raw := range []string{
		"\x00\x01 not http\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n",
		"GET /nothing-here HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
	} {
		httpGarbage(t, info.Metrics, raw)
	}

	if code, ok := a.Wait(0); ok {
		t.Fatalf("A exited (code %d) after the garbage:\n%s", code, a.Tail(30))
	}
	waitRoute(t, 20*time.Second, pub, "/g/", sub)
	waitRoute(t, 20*time.Second, dial(t, a, "A/tcp after"), "/g/", sub)
	waitRoute(t, 20*time.Second, dialUnix(t, a, "A/unix after"), "/g/", sub)
	var after map[string]float64
	deadline := time.Now().Add(20 * time.Second)
	for {
		after = a.Metrics()
		var short []string
		for series, least := range garbageCounters {
			if d := growth(before, after, series); d < least {
				short = append(short, fmt.Sprintf("%s %+.0f (want %+.0f)", series, d, least))
			}
		}
		if len(short) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("drops not counted:\n%s", strings.Join(short, "\n"))
		}
		<-time.After(testutil.PollEvery * 10)
	}
	for series := range garbageCounters {
		t.Logf("%s: %+.0f", series, growth(before, after, series))
	}
	if a.Logged("panic") {
		t.Fatalf("A logged a panic:\n%s", a.Tail(30))
	}
}

// growth returns how much series (or the sum "a+b") grew from before to
// after.
func growth(before, after map[string]float64, series string) float64 {
	var d float64
	for _, s := range strings.Split(series, "}+") {
		if !strings.HasSuffix(s, "}") && strings.Contains(s, "{") {
			s += "}"
		}
		d += after[s] - before[s]
	}
	return d
}

// garbage8 is 8 bytes that are no protobuf message (field 31, wire type 7).
var garbage8 = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// socketGarbage connects to the RSB socket server, reads its greeting,
// writes frame and waits for the server to close the connection.
func socketGarbage(t *testing.T, network, addr string, frame []byte) {
	t.Helper()
	c, err := net.DialTimeout(network, addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, 4)); err != nil {
		t.Fatalf("%s %s: greeting: %v", network, addr, err)
	}
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	if len(frame) >= 4 && int(binary.LittleEndian.Uint32(frame)) > len(frame)-4 && binary.LittleEndian.Uint32(frame) < 1<<20 {
		// A frame cut short: the client ends its side, the server then
		// fails to read the rest.
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}
	if n, err := io.Copy(io.Discard, c); err != nil && !isClosedByPeer(err) {
		t.Fatalf("%s %s: after % x: read %d bytes, then %v; want the server to close", network, addr, frame[:min(len(frame), 12)], n, err)
	}
}

// isClosedByPeer reports a reset or EOF-like end of a connection.
func isClosedByPeer(err error) bool {
	return err == nil || strings.Contains(err.Error(), "reset") || strings.Contains(err.Error(), "broken pipe")
}

// udpGarbage sends n random datagrams of random sizes (empty to 9000
// bytes) to addr.
func udpGarbage(t *testing.T, addr string, n int) {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range n {
		b := make([]byte, rng.IntN(9000))
		for k := range b {
			b[k] = byte(rng.Uint32())
		}
		if i%4 == 0 && len(b) > 0 {
			b[0] = byte(i / 4 % 8) // a plausible first byte now and then
		}
		c.Write(b)
	}
}

// tcpGarbage writes random bytes on a TCP connection to addr and closes it.
func tcpGarbage(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, 4096)
	for k := range b {
		b[k] = byte(rand.Uint32())
	}
	b[0] = 0xee // no memberlist message type
	c.Write(b)
}

// httpGarbage sends raw to the HTTP endpoint at addr and reads the
// answer's status line.
func httpGarbage(t *testing.T, addr, raw string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, raw)
	line, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 4") {
		t.Errorf("%.24q: answer %q, want a 4xx", raw, line)
	}
}

// dialUnix connects a reading client to d's Unix socket.
func dialUnix(t *testing.T, d *daemon, name string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := new(net.Dialer).DialContext(ctx, "unix", d.Info().SocketPath)
	if err != nil {
		t.Fatalf("%s: dial %s: %v", name, d.Name(), err)
	}
	conn, err := sockclient.NewClientConn(ctx, nc, sockclient.ClientConfig{CloseTimeout: 2 * time.Second})
	if err != nil {
		nc.Close()
		t.Fatalf("%s: handshake with %s: %v", name, d.Name(), err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &client{t: t, d: d, name: name, conn: conn, id: notification.NewParticipantID(), done: make(chan struct{})}
	go c.read()
	return c
}
