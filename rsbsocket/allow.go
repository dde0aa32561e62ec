package rsbsocket

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
)

// allowed reports whether the server serves a connection from nc's peer:
// every peer when Config.Allow is empty, otherwise a TCP peer whose address
// lies in one of its prefixes. A connection with no IP address (a Unix
// socket's, guarded by the socket file's permissions) is always served.
func (s *Server) allowed(nc net.Conn) bool {
	if len(s.cfg.Allow) == 0 {
		return true
	}
	ta, ok := nc.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return true
	}
	ip, ok := netip.AddrFromSlice(ta.IP)
	if !ok {
		return false
	}
	return allowedAddr(s.cfg.Allow, ip.Unmap())
}

// allowedAddr reports whether ip lies in one of prefixes.
func allowedAddr(prefixes []netip.Prefix, ip netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// refuseNotAllowed closes a connection from a peer outside Config.Allow,
// counting it first (the peer may see the close at once). The first such
// connection is logged as a warning, later ones at debug level, so that a
// scanner cannot flood the log.
func (s *Server) refuseNotAllowed(nc net.Conn) {
	n := s.stats.connsNotAllowed.Add(1)
	_ = nc.Close()
	level := slog.LevelDebug
	if n == 1 {
		level = slog.LevelWarn
	}
	s.log.Log(context.Background(), level, "connection from an address outside the socket allow list refused",
		"remote", nc.RemoteAddr().String(), "refused_so_far", n)
}
