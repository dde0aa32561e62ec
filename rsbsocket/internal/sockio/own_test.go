package sockio

import "testing"

// TestOwnClientsCounted: a local address shared by two client connections
// (to different servers) stays known until both are gone.
func TestOwnClientsCounted(t *testing.T) {
	const addr = "127.0.0.1:1"
	ownClients.mu.Lock()
	if ownClients.addrs == nil {
		ownClients.addrs = make(map[string]int)
	}
	ownClients.addrs[addr] += 2
	ownClients.mu.Unlock()
	ForgetOwnClient(addr)
	if !IsOwnClient(addr) {
		t.Fatal("forgotten after one of two connections closed")
	}
	ForgetOwnClient(addr)
	if IsOwnClient(addr) {
		t.Fatal("still known after both closed")
	}
	ForgetOwnClient("") // a connection that was never recorded
}
