package main

import (
	"fmt"
	"io/fs"
	"net/netip"
	"strconv"
	"strings"
)

// Keys of the settings that say who may connect to the RSB socket server.
const (
	keySocketAllow    = "rsbd.socket.allow"
	keySocketPathMode = "rsbd.socket.path.mode"
)

// defaultSocketPathMode is the Unix socket file's permission by default:
// every local user may connect, as every local user reaches the TCP port.
const defaultSocketPathMode = "0666"

// socketAccessUsage is the part of --help that says who can connect.
const socketAccessUsage = `Who can connect: the RSB socket protocol has no authentication. Any
program that reaches --socket-addr (by default TCP port 55555 on every
IPv4 interface) may publish on every scope and receive every event;
--socket-addr 127.0.0.1:55555 keeps it to this host, --socket-allow
limits it to the networks listed (others are closed at once and counted
in rsbd_socket_refused_total{reason="not_allowed"}). The Unix socket
(--socket-path) admits every local user who may write to its file
(--socket-path-mode, default 0666).
`

// socketAllow reads --socket-allow: CIDR prefixes or single addresses,
// comma-separated; empty admits every address.
func (r *reader) socketAllow() []netip.Prefix {
	var out []netip.Prefix
	for _, item := range r.c.StringList(keySocketAllow, nil) {
		p, err := parseAllowItem(item)
		if err != nil {
			r.fail(keySocketAllow, "a comma-separated list of CIDR prefixes or IP addresses", err)
			return nil
		}
		out = append(out, p)
	}
	return out
}

// parseAllowItem parses one allow-list entry: "10.0.0.0/8", "fd00::/8" or
// an address, which stands for itself alone. IPv4-mapped IPv6 prefixes are
// refused: connections are matched by their unmapped address.
func parseAllowItem(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		if a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q: zones are not matched", s)
		}
		return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("%q: write IPv4 prefixes as IPv4", s)
	}
	return p.Masked(), nil
}

// socketPathMode reads --socket-path-mode, octal permission bits.
func (r *reader) socketPathMode() fs.FileMode {
	v := strings.TrimSpace(r.c.String(keySocketPathMode, defaultSocketPathMode))
	m, err := strconv.ParseUint(v, 8, 32)
	if err != nil || m > uint64(fs.ModePerm) {
		r.fail(keySocketPathMode, "octal permission bits such as 0660", err)
		return 0
	}
	if m == 0 {
		r.fail(keySocketPathMode, "a mode that lets the daemon's user or group connect, such as 0600 or 0660", nil)
	}
	return fs.FileMode(m)
}
