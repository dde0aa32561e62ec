package rsbsocket

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// TestAllowListClosesOtherAddresses: with Allow set to 127.0.0.2/32, a
// client from 127.0.0.1 is closed before its greeting and counted, one
// from 127.0.0.2 is greeted and served, and a Unix socket client, which
// has no address, is served too.
func TestAllowListClosesOtherAddresses(t *testing.T) {
	cfg := quietConfig()
	cfg.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}
	s, addr := startServer(t, cfg, nil)

	refused, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer refused.Close()
	refused.SetReadDeadline(time.Now().Add(socktest.Timeout))
	if n, err := refused.Read(make([]byte, 4)); err == nil || n != 0 {
		t.Fatalf("a client from 127.0.0.1 read %d bytes, err %v; want the connection closed", n, err)
	} else if err != io.EOF && !isReset(err) {
		t.Fatalf("a client from 127.0.0.1: %v, want EOF or reset", err)
	}
	if st := s.Stats(); st.ConnsNotAllowed != 1 || st.ConnsTotal != 0 {
		t.Fatalf("after one refused connection: %+v", st)
	}

	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	ok, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("cannot dial from 127.0.0.2: %v", err)
	}
	defer ok.Close()
	greeting := make([]byte, 4)
	ok.SetReadDeadline(time.Now().Add(socktest.Timeout))
	if _, err := io.ReadFull(ok, greeting); err != nil {
		t.Fatalf("a client from 127.0.0.2 was not greeted: %v", err)
	}

	path := filepath.Join(t.TempDir(), "rsbd.sock")
	unixLn, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(unixLn) }()
	socktest.Dial(t, sockclient.UnixPrefix+path)
	testutil.WaitFor(t, socktest.Timeout, "the 127.0.0.2 and Unix clients served", func() bool { return len(s.Connections()) == 2 })
	if st := s.Stats(); st.ConnsNotAllowed != 1 {
		t.Fatalf("ConnsNotAllowed = %d, want 1", st.ConnsNotAllowed)
	}
}

// TestAllowListValidation: an invalid prefix is refused by Validate.
func TestAllowListValidation(t *testing.T) {
	if err := (Config{Allow: []netip.Prefix{{}}}).Validate(); err == nil {
		t.Fatal("an invalid prefix validated")
	}
	if err := (Config{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestAllowedAddr matches IPv4, IPv6 and IPv4-mapped addresses.
func TestAllowedAddr(t *testing.T) {
	ps := []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("fd00::/8")}
	for ip, want := range map[string]bool{"10.1.2.3": true, "10.2.0.1": false, "fd12::1": true, "::1": false, "127.0.0.1": false} {
		if got := allowedAddr(ps, netip.MustParseAddr(ip)); got != want {
			t.Errorf("allowedAddr(%s) = %v, want %v", ip, got, want)
		}
	}
}

// isReset reports whether err is a connection reset.
func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }
