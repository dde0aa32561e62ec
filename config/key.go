package config

import (
	"fmt"
	"strings"
)

// Keys rsbd reads, in canonical form. The rsbd.* keys are the daemon's own; the others are
// RSB's and keep their RSB meaning.
const (
	KeySocketAddr  = "rsbd.socket.addr"  // RSB socket protocol listen address (--socket-addr)
	KeyGossipAddr  = "rsbd.gossip.addr"  // memberlist bind address (--gossip-addr)
	KeyMetricsAddr = "rsbd.metrics.addr" // /metrics, /livez, /readyz listen address (--metrics-addr)
	KeyJoin        = "rsbd.join"         // comma-separated peers to join (--join)
	KeyMulticast   = "rsbd.multicast"    // boolean: multicast (true) or unicast fan-out (--multicast)
	KeyScopeQoS    = "rsbd.qos"          // prefix of the per-scope QoS entries

	KeyReliability = "qualityofservice.reliability" // RSB: UNRELIABLE or RELIABLE
	KeyOrdering    = "qualityofservice.ordering"    // RSB: UNORDERED or ORDERED

	KeySocketHost   = "transport.socket.host"   // RSB socket transport host
	KeySocketPort   = "transport.socket.port"   // RSB socket transport port
	KeySocketServer = "transport.socket.server" // RSB socket transport server role: 0, 1, auto
	// KeySocketPath is rsbd's extension of the socket transport: the Unix
	// socket the daemon serves (its default for --socket-path) and the
	// rsb tools connect to instead of host and port.
	KeySocketPath = "transport.socket.path"
)

// NormalizeKey returns the canonical spelling of key: surrounding whitespace removed,
// ASCII letters lowercased, '-' and '_' replaced by '.'. From the first '/' on, the key is
// an RSB scope and kept verbatim. Keys must be non-empty printable ASCII without spaces,
// '=', '#', '[' or ']'; anything else yields an error wrapping ErrSyntax.
func NormalizeKey(key string) (string, error) {
	s := strings.TrimSpace(key)
	if s == "" {
		return "", fmt.Errorf("%w: empty key", ErrSyntax)
	}
	b := []byte(s)
	scope := false
	for i, c := range b {
		if !keyByte(c) {
			return "", fmt.Errorf("%w: invalid character %q in key %q", ErrSyntax, c, s)
		}
		if c == '/' {
			scope = true
		}
		if scope {
			continue
		}
		switch {
		case c == '-' || c == '_':
			b[i] = '.'
		case 'A' <= c && c <= 'Z':
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b), nil
}

// keyByte reports whether c may appear in a key.
func keyByte(c byte) bool {
	if c <= ' ' || c >= 0x7f {
		return false
	}
	switch c {
	case '=', '#', '[', ']':
		return false
	}
	return true
}

// FlagKey maps a command-line flag name to the key it sets: the name without leading
// dashes, normalized, under "rsbd.". FlagKey("socket-addr") is "rsbd.socket.addr", the
// same key as RSB_RSBD_SOCKET_ADDR and "[rsbd] socket.addr".
func FlagKey(name string) string {
	name = strings.TrimLeft(name, "-")
	if k, err := NormalizeKey(name); err == nil {
		name = k
	}
	return "rsbd." + name
}

// EnvKey maps an environment variable name to its key by the RSB rule (strip RSB_,
// lowercase, '_' becomes '.'). It reports false for names without the prefix, for the
// loader's own variables and for names that do not form a valid key.
func EnvKey(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, EnvPrefix)
	if !ok || rest == "" || name == EnvConfigFiles || name == EnvConfigDebug {
		return "", false
	}
	if strings.ContainsRune(rest, '/') {
		return "", false
	}
	k, err := NormalizeKey(rest)
	if err != nil {
		return "", false
	}
	return k, true
}
