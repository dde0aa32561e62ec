package membership

import (
	"errors"
	"net"
	"testing"

	"github.com/hashicorp/memberlist"
)

// TestAddrInUse: a gossip port whose UDP side is taken fails with an error
// addrInUse recognises, through memberlist's formatting of it; other bind
// errors are not taken for it.
func TestAddrInUse(t *testing.T) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	port := pc.LocalAddr().(*net.UDPAddr).Port
	mc := memberlist.DefaultLANConfig()
	mc.BindAddr, mc.BindPort = "127.0.0.1", port
	mc.Logger = nil
	nt, err := newStoppableTransport(mc)
	if err == nil {
		_ = nt.Shutdown()
		t.Fatalf("bound gossip port %d whose UDP side is taken", port)
	}
	if !addrInUse(err) {
		t.Fatalf("addrInUse(%v) = false", err)
	}
	if _, lerr := net.Listen("tcp", "192.0.2.1:0"); lerr == nil || addrInUse(lerr) {
		t.Fatalf("a bind to an address not on this host: %v, taken for a port in use", lerr)
	}
	if addrInUse(errors.New("membership: other")) {
		t.Fatal("an unrelated error taken for a port in use")
	}
}
