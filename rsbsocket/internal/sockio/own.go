package sockio

import (
	"net"
	"sync"
)

// ownClients holds the local addresses of the TCP connections this
// process has open as a client (sockclient.ClientConn), counted (two
// connections to different servers may share a local address), so that a
// server can tell its own process's clients.
var ownClients struct {
	mu    sync.Mutex
	addrs map[string]int
}

// NoteOwnClient records nc, a TCP connection of a client in this process,
// and returns its key ("" for other connections), which ForgetOwnClient
// takes.
func NoteOwnClient(nc net.Conn) string {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return ""
	}
	key := tc.LocalAddr().String()
	ownClients.mu.Lock()
	defer ownClients.mu.Unlock()
	if ownClients.addrs == nil {
		ownClients.addrs = make(map[string]int)
	}
	ownClients.addrs[key]++
	return key
}

// ForgetOwnClient undoes NoteOwnClient.
func ForgetOwnClient(key string) {
	if key == "" {
		return
	}
	ownClients.mu.Lock()
	defer ownClients.mu.Unlock()
	if ownClients.addrs[key]--; ownClients.addrs[key] <= 0 {
		delete(ownClients.addrs, key)
	}
}

// IsOwnClient reports whether addr is the local address of one of this
// process's client connections.
func IsOwnClient(addr string) bool {
	ownClients.mu.Lock()
	defer ownClients.mu.Unlock()
	return ownClients.addrs[addr] > 0
}
