package node

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
)

// dialAddr connects an RSB socket client to addr, closed when the test
// ends.
func dialAddr(t testing.TB, addr string) *sockclient.ClientConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := sockclient.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// recvFrame reads one frame from c within 10 s.
func recvFrame(t testing.TB, c *sockclient.ClientConn) []byte {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	f, err := c.Recv()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSocketPathServesClients: with SocketPath set, a client on the Unix
// socket reaches embedded subscriptions and TCP clients, and gets their
// events; the socket file is open to every user and gone after Close.
func TestSocketPathServesClients(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rsbd.sock")
	n := startNodes(t, 1, func(_ int, c *Config) { c.SocketPath = path })[0]
	if n.SocketPath() != path {
		t.Fatalf("SocketPath() = %q, want %q", n.SocketPath(), path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != socketFileMode {
		t.Fatalf("socket file mode %v, want a socket with %o", fi.Mode(), socketFileMode)
	}
	got := make(chan []byte, 1)
	defer n.Subscribe(scope.MustParse("/unix/"), func(ev *notification.Event) { got <- bytes.Clone(ev.Data) })()
	uc := dialAddr(t, sockclient.UnixPrefix+path)
	tc := dialAddr(t, n.SocketAddr().String())
	// No wait for routing: the server routes a connection before it
	// writes the greeting that dialAddr reads.

	body, err := notification.Marshal(testutil.Event("/unix/a/", 1, []byte("from the unix client")))
	if err != nil {
		t.Fatal(err)
	}
	if err := uc.Send(body); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-got:
		if string(d) != "from the unix client" {
			t.Fatalf("embedded subscription got %q", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the embedded subscription got nothing from the Unix client")
	}
	if f := recvFrame(t, tc); !bytes.Equal(f, body) {
		t.Fatalf("the TCP client got %x, want %x", f, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Publish(ctx, testutil.Event("/unix/b/", 7, []byte("from the node"))); err != nil {
		t.Fatal(err)
	}
	f := recvFrame(t, uc)
	if ev, err := notification.Unmarshal(f); err != nil || string(ev.Data) != "from the node" {
		t.Fatalf("the Unix client got %v, %v", ev, err)
	}
	_ = tc.Close()
	_ = uc.Close()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket file after Close: %v", err)
	}
}

// TestSocketPathOnly: SocketAddr "off" with a SocketPath serves the Unix
// socket alone.
func TestSocketPathOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rsbd.sock")
	n := startNodes(t, 1, func(_ int, c *Config) { c.SocketAddr, c.SocketPath = "off", path })[0]
	if n.SocketAddr() != nil {
		t.Fatalf("TCP socket served at %v", n.SocketAddr())
	}
	dialAddr(t, sockclient.UnixPrefix+path)
}

// TestSocketPathExisting: a stale socket file is replaced; a served socket
// and a file that is not a socket are refused and left as they were.
func TestSocketPathExisting(t *testing.T) {
	dir := t.TempDir()
	start := func(path string) (*Node, error) {
		c := testConfig(t, testPool())
		c.SocketPath = path
		n, err := New(c, nil)
		if err == nil {
			t.Cleanup(func() { n.Close() })
		}
		return n, err
	}

	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = ln.Close() // the file stays, nobody serves it
	if _, err := start(stale); err != nil {
		t.Fatalf("over a stale socket file: %v", err)
	}

	if _, err := start(stale); !errors.Is(err, ErrSocketInUse) {
		t.Fatalf("over a served socket: %v, want ErrSocketInUse", err)
	}
	if fi, err := os.Lstat(stale); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("the served socket file after the refusal: %v, %v", fi, err)
	}

	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := start(plain); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("over a regular file: %v", err)
	}
	if b, err := os.ReadFile(plain); err != nil || string(b) != "keep me" {
		t.Fatalf("the regular file after the refusal: %q, %v", b, err)
	}
}

// TestSocketPathTooLong: Validate refuses a path sun_path cannot hold.
func TestSocketPathTooLong(t *testing.T) {
	c := DefaultConfig()
	c.SocketPath = "/" + strings.Repeat("x", maxSocketPath)
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "socket path") {
		t.Fatalf("Validate: %v", err)
	}
	c.SocketPath = c.SocketPath[:maxSocketPath]
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate of a %d-byte path: %v", len(c.SocketPath), err)
	}
}

// TestSocketConnectionLimit: the node passes its socket connection bound
// to the server and exports the connections it refused.
func TestSocketConnectionLimit(t *testing.T) {
	c := testConfig(t, testPool())
	c.Socket.MaxConnections = 1
	n, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	dialSocket(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if extra, err := sockclient.Dial(ctx, n.SocketAddr().String()); err == nil {
		_ = extra.Close()
		t.Fatal("a second connection was served")
	}
	if got := gatherCounter(t, n, "rsbd_socket_connections_refused_total"); got != 1 {
		t.Fatalf("rsbd_socket_connections_refused_total = %v, want 1", got)
	}
}

// TestSocketDisconnectMetrics: connections that end are exported by
// reason, every reason present from the start.
func TestSocketDisconnectMetrics(t *testing.T) {
	n, err := New(testConfig(t, testPool()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	disconnects := func() map[string]float64 {
		mfs, err := n.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, mf := range mfs {
			if mf.GetName() == "rsbd_socket_disconnects_total" {
				for _, m := range mf.GetMetric() {
					out[labelValue(m, "reason")] = m.GetCounter().GetValue()
				}
			}
		}
		return out
	}
	if got := disconnects(); len(got) != int(rsbsocket.NumDisconnectReasons) || got["eof"] != 0 {
		t.Fatalf("before any connection: %v", got)
	}
	c := dialSocket(t, n)
	_ = c.Close()
	testutil.WaitFor(t, 10*time.Second, "the orderly disconnect counted", func() bool { return disconnects()["eof"] == 1 })
}

// TestSocketModeSetsTheFilePermission: SocketMode 0660 is the socket
// file's permission, and a mode with other bits is refused by Validate.
func TestSocketModeSetsTheFilePermission(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rsbd.sock")
	startNodes(t, 1, func(_ int, c *Config) { c.SocketPath, c.SocketMode = path, 0o660 })
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o660 {
		t.Fatalf("socket file mode %v, want 0660", fi.Mode().Perm())
	}
	if err := (Config{SocketPath: path, SocketMode: os.ModeSetuid | 0o600}).Validate(); err == nil {
		t.Fatal("a mode with setuid validated")
	}
}
