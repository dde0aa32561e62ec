package membership

import (
	"net"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
)

// TestGossipGarbageCounted: garbage on the gossip port, by UDP and by TCP,
// is counted as GossipMalformed, and the node still gossips with a peer
// that joins afterwards.
func TestGossipGarbageCounted(t *testing.T) {
	a := startNode(t, "a", 1, nil)
	addr := a.GossipAddr().String()
	u, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	for _, p := range [][]byte{{}, {0xff}, {0x02, 0xde, 0xad, 0xbe, 0xef}, {0x0c, 1, 2, 3}} {
		if _, err := u.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte{0xee, 1, 2, 3, 4, 5})
	c.Close()
	testutil.WaitFor(t, waitTimeout, "garbage counted", func() bool { return a.Stats().GossipMalformed >= 3 })
	b := startNode(t, "b", 2, nil, a)
	testutil.WaitFor(t, waitTimeout, "a seeing b", func() bool { return len(a.Members()) == 1 && len(b.Members()) == 1 })
}

// TestIsMalformedGossip classifies memberlist's lines.
func TestIsMalformedGossip(t *testing.T) {
	for line, want := range map[string]bool{
		"[ERR] memberlist: Failed to decode ping request: EOF from=1.2.3.4:5": true,
		"[WARN] memberlist: Got invalid checksum for UDP packet: 1, 2":        true,
		"[ERR] memberlist: Received invalid msgType (238) from=1.2.3.4:5":     true,
		"[ERR] memberlist: Decrypt packet failed: x":                          false,
		"[DEBUG] memberlist: Failed to decode x":                              false,
		"[INFO] memberlist: Marking b as failed":                              false,
	} {
		if got := isMalformedGossip([]byte(line)); got != want {
			t.Errorf("%q: %v, want %v", line, got, want)
		}
	}
}
