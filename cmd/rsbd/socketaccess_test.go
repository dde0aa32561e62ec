package main

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/config"
)

// TestSocketAccessSettings: --socket-allow and --socket-path-mode reach the
// node's configuration from a flag, a file and the environment, and are
// shown by --print-config with their origin.
func TestSocketAccessSettings(t *testing.T) {
	s, c := mustSettings(t, "[rsbd]\nsocket.path.mode = 0660\n", []string{"RSB_RSBD_SOCKET_ALLOW=10.0.0.0/8, 192.168.1.7 ,fd00::/8"})
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"), netip.MustParsePrefix("fd00::/8")}
	if !reflect.DeepEqual(s.node.Socket.Allow, want) {
		t.Fatalf("allow = %v, want %v", s.node.Socket.Allow, want)
	}
	if s.node.SocketMode != 0o660 {
		t.Fatalf("socket mode = %#o, want 0660", s.node.SocketMode)
	}
	for key, origin := range map[string]string{keySocketAllow: "env RSB_RSBD_SOCKET_ALLOW", keySocketPathMode: "rsb.conf:2"} {
		if v, _ := c.Get(key); !strings.HasSuffix(v.Origin.String(), origin) {
			t.Errorf("%s comes from %q, want %q", key, v.Origin, origin)
		}
	}
	s, _ = mustSettings(t, "", nil, "--socket-allow", "127.0.0.1/8")
	if got := s.node.Socket.Allow; len(got) != 1 || got[0] != netip.MustParsePrefix("127.0.0.0/8") {
		t.Fatalf("allow = %v, want the masked 127.0.0.0/8", got)
	}
	s, _ = mustSettings(t, "", nil)
	if s.node.Socket.Allow != nil || s.node.SocketMode != 0o666 {
		t.Fatalf("defaults: allow %v, mode %#o; want none and 0666", s.node.Socket.Allow, s.node.SocketMode)
	}
}

// TestSocketAccessBadValues: a bad allow entry or mode names its key.
func TestSocketAccessBadValues(t *testing.T) {
	for _, args := range [][]string{
		{"--socket-allow", "10.0.0.0/33"},
		{"--socket-allow", "10.0.0.1,bogus"},
		{"--socket-allow", "::ffff:10.0.0.0/104"},
		{"--socket-path-mode", "0999"},
		{"--socket-path-mode", "01777"},
		{"--socket-path-mode", "0"},
	} {
		c, err := load(t, "", nil, args...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = parseSettings(c)
		var ve *config.ValueError
		if !errors.As(err, &ve) || !strings.HasPrefix(ve.Key, "rsbd.socket.") {
			t.Errorf("%q: err %v, want a ValueError naming its key", args, err)
		}
	}
}

// FuzzParseAllowItem: any entry either fails or yields a valid, masked
// prefix that contains its own address.
func FuzzParseAllowItem(f *testing.F) {
	for _, s := range []string{"10.0.0.0/8", "192.168.1.7", "fd00::/8", "::1", "::ffff:1.2.3.4", "1.2.3.4/33", "fe80::1%eth0", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseAllowItem(s)
		if err != nil {
			return
		}
		if !p.IsValid() || p != p.Masked() || !p.Contains(p.Addr()) {
			t.Fatalf("%q gave %v", s, p)
		}
	})
}
