package client

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
)

// SchemeSocket is the URI scheme of the RSB socket transport.
const SchemeSocket = "socket"

// URI is a bus address as RSB tools write it: SCHEME:[//HOST[:PORT]][SCOPE][?OPTIONS],
// e.g. socket://localhost:55555/robot/arm or socket:/robot/arm.
type URI struct {
	// Scheme is the transport; only "socket" is supported.
	Scheme string
	// Host is the server's host (default localhost).
	Host string
	// Port is the server's TCP port (default 55555).
	Port int
	// Scope is the scope the URI names (default the root scope).
	Scope scope.Scope
	// Path, when set, is the daemon's Unix socket (rsbd --socket-path): the
	// client connects there instead of to Host:Port. Option path=PATH.
	Path string
}

// DefaultURI returns the URI of the local daemon's root scope.
func DefaultURI() URI {
	return URI{Scheme: SchemeSocket, Host: DefaultHost, Port: DefaultPort, Scope: scope.Root}
}

// ParseURI parses an RSB bus URI. The scheme may be left out when the text
// starts with the scope ("/a/b" means socket:/a/b); host, port and scope fall
// back to DefaultURI. See ParseURIDefault.
func ParseURI(s string) (URI, error) { return ParseURIDefault(s, DefaultURI()) }

// ParseURIDefault parses an RSB bus URI, taking the host and port it leaves
// out from def (a URI without scope names the root). The options host=H and
// port=P override the authority part; path=PATH (an rsbd extension) names
// the daemon's Unix socket, which the client then uses instead (a URI that
// names a host or port without path= drops def's path); server=0 and server=auto (RSB's client roles) are accepted, server=1
// is refused because a client cannot serve (rsbd does); tcpnodelay and nodelay
// are accepted and ignored (Go enables TCP_NODELAY); other options are
// ignored. Errors wrap ErrBadURI.
func ParseURIDefault(s string, def URI) (URI, error) {
	out := def
	out.Scheme, out.Scope = SchemeSocket, scope.Root
	if s == "" {
		return out, nil
	}
	if strings.ContainsRune(s, '#') {
		return URI{}, fmt.Errorf("%w: %q: fragments not supported", ErrBadURI, s)
	}
	typed := s // errors quote what the user typed
	if strings.HasPrefix(s, "/") {
		s = SchemeSocket + ":" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return URI{}, fmt.Errorf("%w: %q: %w", ErrBadURI, typed, err)
	}
	if err := checkURIShape(u); err != nil {
		return URI{}, fmt.Errorf("%w: %q: %w", ErrBadURI, typed, err)
	}
	if u.Host != "" {
		if err := applyAuthority(&out, u.Hostname(), u.Port()); err != nil {
			return URI{}, fmt.Errorf("%w: %q: %w", ErrBadURI, typed, err)
		}
	}
	q := u.Query()
	if err := applyOptions(&out, q); err != nil {
		return URI{}, fmt.Errorf("%w: %q: %w", ErrBadURI, typed, err)
	}
	if (u.Host != "" || q.Has("host") || q.Has("port")) && !q.Has("path") {
		out.Path = "" // a server named by host or port is reached over TCP
	}
	if p := u.EscapedPath(); p != "" {
		sc, err := scope.Parse(p)
		if err != nil {
			return URI{}, fmt.Errorf("%w: %q: %w", ErrBadURI, typed, typedScopeError(u, err))
		}
		out.Scope = sc
	}
	return out, nil
}

// typedScopeError returns the error about the scope as the user typed it
// (u.Path, without the percent-escapes EscapedPath adds for a space or
// other character), falling back to err when that text parses.
func typedScopeError(u *url.URL, err error) error {
	if _, terr := scope.Parse(u.Path); terr != nil {
		return terr
	}
	return err
}

// checkURIShape accepts only the forms RSB URIs take.
func checkURIShape(u *url.URL) error {
	switch {
	case u.Scheme != SchemeSocket:
		return fmt.Errorf("transport %q not supported (only %s)", u.Scheme, SchemeSocket)
	case u.Opaque != "":
		return fmt.Errorf("the scope must start with '/'")
	case u.User != nil:
		return fmt.Errorf("user information not supported")
	}
	return nil
}

// applyAuthority sets host and port from the authority part.
func applyAuthority(out *URI, host, port string) error {
	if host != "" {
		if err := checkHost(host); err != nil {
			return err
		}
		out.Host = host
	}
	if port != "" {
		return setPort(out, port)
	}
	return nil
}

// checkHost accepts an IP address or a host name of letters, digits, '-',
// '_' and '.'.
func checkHost(h string) error {
	if strings.Contains(h, ":") {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return fmt.Errorf("host %q: %w", h, err)
		}
		if a.Zone() != "" {
			return fmt.Errorf("host %q: zones not supported", h)
		}
		return nil
	}
	if h == "" || len(h) > maxHostLen {
		return fmt.Errorf("host %q: empty or too long", h)
	}
	for _, c := range []byte(h) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("host %q: invalid character %q", h, c)
		}
	}
	return nil
}

// setPort parses a TCP port 1..65535.
func setPort(out *URI, port string) error {
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("port %q outside 1..65535", port)
	}
	out.Port = p
	return nil
}

// applyOptions applies the socket transport options of the query.
func applyOptions(out *URI, q url.Values) error {
	for key, vals := range q {
		v := vals[len(vals)-1]
		switch key {
		case "host":
			if err := checkHost(v); err != nil {
				return err
			}
			out.Host = v
		case "port":
			if err := setPort(out, v); err != nil {
				return err
			}
		case "path":
			if err := checkPath(v); err != nil {
				return err
			}
			out.Path = v
		case "server":
			switch v {
			case "0", "false", "auto":
			case "1", "true":
				return fmt.Errorf("server=%s: a client cannot act as the socket server; run rsbd", v)
			default:
				return fmt.Errorf("server=%q: want 0, 1 or auto", v)
			}
		}
	}
	return nil
}

// checkPath accepts an absolute Unix socket path that fits sun_path.
func checkPath(p string) error {
	if !strings.HasPrefix(p, "/") || len(p) > maxSocketPath || strings.ContainsRune(p, 0) {
		return fmt.Errorf("path %q: want an absolute path of at most %d bytes", p, maxSocketPath)
	}
	return nil
}

// Addr returns the server address to dial: "host:port", or "unix:PATH"
// when the URI names the daemon's Unix socket.
func (u URI) Addr() string {
	if u.Path != "" {
		return sockclient.UnixPrefix + u.Path
	}
	return u.hostPort()
}

func (u URI) hostPort() string { return net.JoinHostPort(u.Host, strconv.Itoa(u.Port)) }

// String formats u as socket://host:port/scope/, followed by ?path=PATH
// when the URI names a Unix socket.
func (u URI) String() string {
	sc := u.Scope
	if sc.IsZero() {
		sc = scope.Root
	}
	s := u.Scheme + "://" + u.hostPort() + sc.String()
	if u.Path != "" {
		s += "?" + url.Values{"path": {u.Path}}.Encode()
	}
	return s
}

// resolveTarget turns Dial's target (a URI, "host:port", "unix:PATH" or "")
// into a URI.
func resolveTarget(target string) (URI, error) {
	if path, ok := strings.CutPrefix(target, sockclient.UnixPrefix); ok {
		out := DefaultURI()
		if err := checkPath(path); err != nil {
			return URI{}, fmt.Errorf("%w: %q: %w", ErrBadURI, target, err)
		}
		out.Path = path
		return out, nil
	}
	if target == "" || strings.Contains(target, ":/") || strings.HasPrefix(target, "/") ||
		strings.HasPrefix(target, SchemeSocket+":") {
		return ParseURI(target)
	}
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return URI{}, fmt.Errorf("%w: %q: want a URI or host:port: %w", ErrBadURI, target, err)
	}
	out := DefaultURI()
	if err := applyAuthority(&out, host, port); err != nil {
		return URI{}, fmt.Errorf("%w: %q: %w", ErrBadURI, target, err)
	}
	return out, nil
}
