package client

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/scope"
)

func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" means an error
	}{
		{"", "socket://localhost:55555/"},
		{"socket:", "socket://localhost:55555/"},
		{"socket:/", "socket://localhost:55555/"},
		{"socket:/a/b", "socket://localhost:55555/a/b/"},
		{"/a/b/", "socket://localhost:55555/a/b/"},
		{"socket://example.org:4444/x", "socket://example.org:4444/x/"},
		{"socket://example.org/x", "socket://example.org:55555/x/"},
		{"socket://127.0.0.1:1/", "socket://127.0.0.1:1/"},
		{"socket://[::1]:5/s", "socket://[::1]:5/s/"},
		{"socket:/s?host=h&port=7", "socket://h:7/s/"},
		{"socket://h:1/s?server=0&tcpnodelay=1", "socket://h:1/s/"},
		{"socket:?server=auto", "socket://localhost:55555/"},
		{"socket:/s?path=/run/rsbd.sock", "socket://localhost:55555/s/?path=%2Frun%2Frsbd.sock"},
		{"socket://h:1/?path=%2Ftmp%2Fa%20b", "socket://h:1/?path=%2Ftmp%2Fa+b"},
		{"socket:/?path=rel.sock", ""},
		{"socket:/?path=", ""},
		{"socket:/?path=/" + strings.Repeat("x", 107), ""},
		{"socket://h:0/", ""},
		{"socket://h:65536/", ""},
		{"socket://h:x/", ""},
		{"socket:/s?server=1", ""},
		{"socket:/s?server=maybe", ""},
		{"socket:/s?port=", ""},
		{"spread://h:4803/", ""},
		{"inprocess:/", ""},
		{"socket:a/b", ""},
		{"socket:/a//b", ""},
		{"socket:/a b", ""},
		{"socket:/a%2Fb", ""},
		{"socket:/a#frag", ""},
		{"socket://user@h/", ""},
		{"a/b", ""},
		{"//::", ""},
		{"socket:/?host=a/b", ""},
		{"socket://[fe80::1%25eth0]:5/", ""},
	} {
		u, err := ParseURI(tc.in)
		if tc.want == "" {
			if err == nil || !errors.Is(err, ErrBadURI) {
				t.Errorf("ParseURI(%q) = %v, %v; want ErrBadURI", tc.in, u, err)
			}
			continue
		}
		if err != nil || u.String() != tc.want {
			t.Errorf("ParseURI(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
			continue
		}
		if again, err := ParseURI(u.String()); err != nil || again != u {
			t.Errorf("ParseURI(%q) of its own String = %v, %v; want %v", u.String(), again, err, u)
		}
	}
}

// TestParseURIDefaultPath: a default's Unix socket stays unless the URI
// names a server by host or port (and no path of its own).
func TestParseURIDefaultPath(t *testing.T) {
	def := DefaultURI()
	def.Path = "/run/rsbd.sock"
	for in, want := range map[string]string{
		"socket:/a":                   "unix:/run/rsbd.sock",
		"/a":                          "unix:/run/rsbd.sock",
		"socket://h:1/a":              "h:1",
		"socket:/a?port=7":            "localhost:7",
		"socket:/a?host=h":            "h:55555",
		"socket://h:1/a?path=/x.sock": "unix:/x.sock",
		"socket:/a?server=0":          "unix:/run/rsbd.sock",
	} {
		u, err := ParseURIDefault(in, def)
		if err != nil || u.Addr() != want {
			t.Errorf("ParseURIDefault(%q) dials %q (%v), want %q", in, u.Addr(), err, want)
		}
	}
}

func TestResolveTarget(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "localhost:55555",
		"127.0.0.1:9":         "127.0.0.1:9",
		"socket://h:3/a":      "h:3",
		"socket:/a":           "localhost:55555",
		"socket:/a?path=/r/s": "unix:/r/s",
		"unix:/run/rsbd.sock": "unix:/run/rsbd.sock",
		"unix:rel.sock":       "",
		"/x":                  "localhost:55555",
		"[::1]:8":             "[::1]:8",
		"no-port":             "",
		"h:0":                 "",
		"socket://h:99999":    "",
	} {
		u, err := resolveTarget(in)
		if want == "" {
			if !errors.Is(err, ErrBadURI) {
				t.Errorf("resolveTarget(%q) = %v, %v; want ErrBadURI", in, u, err)
			}
			continue
		}
		if err != nil || u.Addr() != want {
			t.Errorf("resolveTarget(%q) = %v, %v; want %s", in, u.Addr(), err, want)
		}
	}
}

// FuzzParseURI checks that ParseURI never panics, that accepted URIs are
// well-formed and that their String form parses back to the same URI.
func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"", "socket:", "socket:/a/b", "socket://h:1/x?server=0", "/a", "socket://[::1]:5/s",
		"socket:/s?host=h&port=7", "spread://h/", "socket:%", "socket://h:0/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURI(s)
		if err != nil {
			if !errors.Is(err, ErrBadURI) {
				t.Fatalf("error %v does not wrap ErrBadURI", err)
			}
			return
		}
		if u.Scheme != SchemeSocket || u.Port < 1 || u.Port > 65535 || u.Scope.IsZero() || u.Host == "" {
			t.Fatalf("ParseURI(%q) accepted %+v", s, u)
		}
		back, err := ParseURI(u.String())
		if err != nil || back != u {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v, %v", s, u, u.String(), back, err)
		}
	})
}

// TestSocketTransportURL: introspection names a TCP link by host and port
// and a Unix-socket link by its path as well.
func TestSocketTransportURL(t *testing.T) {
	tcp := &socketLink{uri: URI{Scheme: SchemeSocket, Host: "h", Port: 1, Scope: scope.MustParse("/a/")}}
	if got := tcp.transportURL(); got != "socket://h:1" {
		t.Errorf("TCP link: %q", got)
	}
	unix := &socketLink{uri: URI{Scheme: SchemeSocket, Host: "localhost", Port: 55555, Path: "/run/rsbd.sock"}}
	if got := unix.transportURL(); got != "socket://localhost:55555/?path=%2Frun%2Frsbd.sock" {
		t.Errorf("Unix link: %q", got)
	}
	if u, err := ParseURI(unix.transportURL()); err != nil || u.Addr() != "unix:/run/rsbd.sock" {
		t.Errorf("the Unix link's URL parses to %v, %v", u, err)
	}
}

// TestParseURIReportsTypedScope quotes the scope as the user typed it, not
// the percent-escaped form URL parsing makes of a space.
func TestParseURIReportsTypedScope(t *testing.T) {
	for _, in := range []string{"/robot arm/", "socket://h:1/robot arm/?server=0"} {
		_, err := ParseURI(in)
		if err == nil {
			t.Fatalf("ParseURI(%q) accepted a space", in)
		}
		msg := err.Error()
		if strings.Contains(msg, "%") || !strings.Contains(msg, `character " " at byte 6 of "/robot arm/"`) ||
			!strings.Contains(msg, strconv.Quote(in)) {
			t.Errorf("ParseURI(%q): %v", in, err)
		}
	}
}
