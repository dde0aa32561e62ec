package e2e

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// sealScope is the scope of the sealed tests' events.
const sealScope = "/sealed/"

// keyLine returns a key file line for key id, its bytes derived from id.
func keyLine(id byte) string {
	return fmt.Sprintf("%d %s", id, hex.EncodeToString(bytes.Repeat([]byte{id, 0x5c}, datagram.KeySize/2)))
}

func writeKeys(t *testing.T, path string, ids ...byte) {
	t.Helper()
	var lines []string
	for _, id := range ids {
		lines = append(lines, keyLine(id))
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// sniffer is a raw UDP socket joined to a multicast group on loopback, as
// an eavesdropper on the LAN would be: it keeps every datagram it hears.
type sniffer struct {
	conn *net.UDPConn
	mu   sync.Mutex
	got  [][]byte
	done chan struct{}
}

func sniff(t *testing.T, pool, sc string) *sniffer {
	t.Helper()
	ap := netip.MustParseAddrPort(pool)
	p, err := group.NewPool(group.Config{PoolBase: ap.Addr(), PoolPort: ap.Port()})
	if err != nil {
		t.Fatal(err)
	}
	g := p.Addr(group.ID(scope.MustParse(sc)))
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("no loopback interface: %v", err)
	}
	conn, err := net.ListenMulticastUDP("udp4", lo, net.UDPAddrFromAddrPort(g))
	if err != nil {
		t.Fatalf("joining %v on lo: %v", g, err)
	}
	s := &sniffer{conn: conn, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		buf := make([]byte, 1<<16)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			s.mu.Lock()
			s.got = append(s.got, bytes.Clone(buf[:n]))
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { conn.Close(); <-s.done })
	return s
}

// data returns the DATA datagrams heard so far.
func (s *sniffer) data() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]byte
	for _, b := range s.got {
		if len(b) > datagram.HeaderSize && datagram.Kind(b[1]) == datagram.KindData {
			out = append(out, b)
		}
	}
	return out
}

// TestSealedDaemons: two daemons sharing a key file and a cluster label
// carry events that an eavesdropper joined to the group cannot read; a
// daemon without the key joins neither the gossip nor receives an event;
// datagrams replayed or tampered with at the receiver are dropped and
// counted; and the key is rotated in three SIGHUP steps while events flow,
// none lost or repeated.
func TestSealedDaemons(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	dir := t.TempDir()
	keysA, keysB := filepath.Join(dir, "a.keys"), filepath.Join(dir, "b.keys")
	writeKeys(t, keysA, 1)
	writeKeys(t, keysB, 1)
	ordered := []string{"RSB_QUALITYOFSERVICE_ORDERING=ORDERED"}
	a := c.start("A", opts{args: []string{"--key-file", keysA, "--cluster-label", "lab"}, env: ordered})
	b := c.start("B", opts{args: []string{"--key-file", keysB, "--cluster-label", "lab"}, env: ordered})
	c.waitPeers(20 * time.Second)
	outsider := newCluster(t) // its own pool: only the gossip join is tried
	outsider.pool = c.pool
	o := outsider.start("Outsider", opts{args: []string{"--join", a.Info().Gossip}})
	if !o.Logged("the data plane is open") || a.Logged("the data plane is open") {
		t.Error("the open data plane warning is not where it belongs")
	}
	sn := sniff(t, c.pool, sealScope)

	pub := dial(t, a, "A/pub")
	lB := dial(t, b, "B/listener")
	lB.listen(sealScope)
	lO := dial(t, o, "Outsider/listener")
	lO.listen(sealScope)
	waitRoute(t, 20*time.Second, pub, sealScope, lB)
	testutil.WaitFor(t, 20*time.Second, "the outsider's join to fail", func() bool {
		return o.Logged("no seed reachable")
	})

	seq := 0
	publish := func(n int) {
		evs := make([]*notification.Event, n)
		for i := range evs {
			evs[i] = pub.event(sealScope, schemaText, fmt.Appendf(nil, "SEALED-E2E-PAYLOAD-%06d", seq))
			seq++
		}
		pub.publishAll(evs)
		testutil.WaitFor(t, 20*time.Second, "B receiving the events", func() bool {
			return lB.count(onScope(sealScope, schemaText)) >= seq
		})
	}
	publish(100)
	heard := sn.data()
	if len(heard) == 0 {
		t.Fatal("the sniffer heard no DATA datagram")
	}
	for _, h := range heard {
		if bytes.Contains(h, []byte("SEALED-E2E")) {
			t.Fatal("an event's payload is readable on the wire")
		}
	}
	if a.Metric("rsbd_peers") != 1 || o.Metric("rsbd_peers") != 0 {
		t.Fatalf("peers: A %v, outsider %v", a.Metric("rsbd_peers"), o.Metric("rsbd_peers"))
	}
	if n := lO.count(onScope(sealScope, schemaText)); n != 0 {
		t.Fatalf("the outsider's listener received %d events", n)
	}

	// Datagrams replayed or tampered with, sent to B's data address.
	last := heard[len(heard)-1]
	flipped := bytes.Clone(last)
	counterAt := len(last) - datagram.SealOverhead + 24
	flipped[counterAt] ^= 0x80
	bData := netip.MustParseAddrPort(b.Info().Data)
	inject := func(what string, raw []byte, reason string) {
		t.Helper()
		series := fmt.Sprintf(`rsbd_drops_total{reason=%q}`, reason)
		before, got := b.Metric(series), lB.count(onScope(sealScope, schemaText))
		conn, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(bData))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write(raw); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 20*time.Second, what+" counted as "+reason, func() bool { return b.Metric(series) > before })
		if n := lB.count(onScope(sealScope, schemaText)); n != got {
			t.Fatalf("%s: B delivered %d more events", what, n-got)
		}
	}
	inject("a replay", last, "replay")
	inject("a flipped bit", flipped, "auth")
	plain := bytes.Clone(last[:datagram.HeaderSize])
	plain[2], plain[4] = 0, 0
	plain = append(plain, 0, 1, 0, 0, 0, 4, 'f', 'a', 'k', 'e')
	binary.BigEndian.PutUint64(plain[40:], 1<<40)
	inject("a datagram in clear", plain, "unsealed")

	// Rotation: add key 2 everywhere, make it the primary, remove key 1.
	for step, ids := range [][]byte{{1, 2}, {2, 1}, {2}} {
		for _, k := range []struct {
			d    *daemon
			path string
		}{{a, keysA}, {b, keysB}} {
			writeKeys(t, k.path, ids...)
			k.d.Signal(syscall.SIGHUP)
			testutil.WaitFor(t, 10*time.Second, fmt.Sprintf("%s's keys reloaded at step %d", k.d.Name(), step),
				func() bool {
					return k.d.Logged("keys reloaded", fmt.Sprintf(`"primary":%d,"ids":[%s]`, ids[0], joinIDs(ids)))
				})
		}
		publish(100)
	}
	texts := lB.received(onScope(sealScope, schemaText))
	if len(texts) != seq {
		t.Fatalf("B received %d events, %d published", len(texts), seq)
	}
	for i, ev := range texts {
		if want := fmt.Sprintf("SEALED-E2E-PAYLOAD-%06d", i); string(ev.Data) != want {
			t.Fatalf("event %d is %q, want %q", i, ev.Data, want)
		}
	}
	for _, d := range []*daemon{a, b} {
		for _, r := range []string{"unknown_key", "unknown_sender"} {
			if v := d.Metric(fmt.Sprintf(`rsbd_drops_total{reason=%q}`, r)); v != 0 && r == "unknown_key" {
				t.Errorf("%s dropped %v datagrams for %s during the rotation", d.Name(), v, r)
			}
		}
	}
}

func joinIDs(ids []byte) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}
