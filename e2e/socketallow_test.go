package e2e

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSocketAllowList: a daemon with --socket-allow 127.0.0.2 closes a
// client from 127.0.0.1 before greeting it and counts it in
// rsbd_socket_refused_total{reason="not_allowed"}; it greets a client from
// 127.0.0.2 and serves its Unix socket, whose file has --socket-path-mode,
// and --print-config shows both settings.
func TestSocketAllowList(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	sock := filepath.Join(t.TempDir(), "a.sock")
	a := c.start("A", opts{args: []string{"--socket-allow", "127.0.0.2", "--socket-path", sock, "--socket-path-mode", "0600"}})
	conf := a.printConfig()
	for _, line := range []string{"rsbd.socket.allow = 127.0.0.2  # flag --socket-allow", "rsbd.socket.path.mode = 0600  # flag --socket-path-mode"} {
		if !strings.Contains(conf, line) {
			t.Errorf("--print-config lacks %q:\n%s", line, conf)
		}
	}
	addr := a.Info().Socket
	refused, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer refused.Close()
	refused.SetDeadline(time.Now().Add(10 * time.Second))
	if n, _ := refused.Read(make([]byte, 4)); n != 0 {
		t.Fatalf("a client from 127.0.0.1 read %d bytes of a greeting", n)
	}
	if got := a.Metric(`rsbd_socket_refused_total{reason="not_allowed"}`); got != 1 {
		t.Fatalf("rsbd_socket_refused_total{reason=\"not_allowed\"} = %v, want 1", got)
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 10 * time.Second}
	ok, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("cannot dial from 127.0.0.2: %v", err)
	}
	defer ok.Close()
	ok.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(ok, make([]byte, 4)); err != nil {
		t.Fatalf("a client from 127.0.0.2 was not greeted: %v", err)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket file: %v, %v; want mode 0600", fi, err)
	}
	sub, pub := dialUnix(t, a, "A/unix sub"), dialUnix(t, a, "A/unix pub")
	waitRoute(t, 20*time.Second, pub, "/allow/", sub)
}
