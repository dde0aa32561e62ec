package e2e

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
)

// le32 is a socket frame header announcing n bytes.
func le32(n uint32) []byte { return binary.LittleEndian.AppendUint32(nil, n) }

// TestSocketRefusesBadInput: garbage, oversized frames and clients that
// break the handshake are refused on the socket port with a logged reason
// and a counter, and the daemon keeps serving well-behaved clients.
func TestSocketRefusesBadInput(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	d := c.start("D", opts{})
	before := d.Metrics()
	refused := []struct {
		name      string
		handshake bool // read the server's greeting before sending
		send      []byte
		log       string
	}{
		{"HTTP request instead of the protocol", false, []byte("GET /metrics HTTP/1.1\r\nHost: rsbd\r\n\r\n"), "frame too large"},
		{"frame of 100 MiB", true, le32(100 << 20), "frame too large"},
		{"garbage frame", true, append(le32(16), bytes.Repeat([]byte{0xff}, 16)...), "frame is not a notification"},
		{"empty frame", true, le32(0), "empty frame"},
	}
	for _, tt := range refused {
		conn := rawDial(t, d)
		if tt.handshake {
			readGreeting(t, conn)
		}
		if _, err := conn.Write(tt.send); err != nil {
			t.Fatalf("%s: write: %v", tt.name, err)
		}
		if err := waitClosed(conn, tt.handshake); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		conn.Close()
		testutil.WaitFor(t, 10*time.Second, tt.name+": warning "+tt.log, func() bool {
			return d.Logged(`"level":"WARN"`, tt.log)
		})
	}
	// Clients that give up early: close before the greeting, and close in
	// the middle of a frame.
	rawDial(t, d).Close()
	conn := rawDial(t, d)
	readGreeting(t, conn)
	conn.Write(append(le32(100), "partial"...))
	conn.Close()

	want := map[string]float64{`rsbd_drops_total{reason="frame_too_large"}`: 2, `rsbd_drops_total{reason="decode_error"}`: 2}
	testutil.WaitFor(t, 10*time.Second, "the refusals counted", func() bool {
		m := d.Metrics()
		for series, n := range want {
			if m[series]-before[series] != n {
				return false
			}
		}
		return true
	})

	listener, pub := dial(t, d, "D/listener"), dial(t, d, "D/pub")
	listener.listen("/g/")
	waitRoute(t, 10*time.Second, pub, "/g/", listener)
	if code, _, err := d.Get("/readyz"); err != nil || code != http.StatusOK {
		t.Fatalf("/readyz after bad input: %d %v", code, err)
	}
	testutil.WaitFor(t, 10*time.Second, "only the good connections left (listener, publisher, witness)", func() bool {
		return d.Metric("rsbd_socket_connections") == 3
	})
}

func rawDial(t *testing.T, d *daemon) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", d.Info().Socket, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// readGreeting reads the server's 4 zero bytes.
func readGreeting(t *testing.T, conn net.Conn) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [4]byte
	if _, err := io.ReadFull(conn, b[:]); err != nil || b != [4]byte{} {
		t.Fatalf("greeting % x: %v", b, err)
	}
}

// waitClosed reads until the server closes the connection; only the
// greeting (unless already read) may come first.
func waitClosed(conn net.Conn, greeted bool) error {
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errors.New("the daemon did not close the connection")
	}
	if greeting := []byte{0, 0, 0, 0}; (greeted && len(b) != 0) || (!greeted && len(b) > 0 && !bytes.Equal(b, greeting)) {
		return errors.New("the daemon answered something besides its greeting")
	}
	return nil
}
