package engine

import (
	"bytes"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// step runs one engine section at now, as Run and the direct paths do.
func step(e *Engine, now time.Time, fn func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn()
	e.flush(now)
	e.queueDeliveries()
}

// takeSent returns what env's Conn sent since the last call, as packets
// received from addr.
func (env *testEnv) takeSent(from netip.AddrPort) []Packet {
	env.conn.mu.Lock()
	defer env.conn.mu.Unlock()
	var ps []Packet
	for _, s := range env.conn.sends {
		ps = append(ps, Packet{Data: s.data, From: from})
	}
	env.conn.sends = nil
	return ps
}

// lastDst returns where the last datagram env's Conn sent went (nil when
// none was sent).
func (env *testEnv) lastDst() []netip.AddrPort {
	env.conn.mu.Lock()
	defer env.conn.mu.Unlock()
	if len(env.conn.sends) == 0 {
		return nil
	}
	return env.conn.sends[len(env.conn.sends)-1].dst
}

// TestPublishReceiveAck drives two engines by hand with one clock, their
// datagrams carried by the test: a reliable event published on A reaches
// B's delivery queue once, B ACKs it to A's address, and the ACK makes B
// a receiver that paces A's stream.
func TestPublishReceiveAck(t *testing.T) {
	sc := scope.MustParse("/rt/")
	id := group.ID(sc)
	addrA := netip.MustParseAddrPort("127.0.0.1:7001")
	a, envA := newTestEngine(t, nil)
	b, envB := newTestEngine(t, func(c *Config) { c.Instance = datagram.InstanceID{0xbb} })
	if err := envA.peers.Update("b", group.PeerState{Version: 1, Instance: b.cfg.Instance, Groups: []datagram.GroupID{id}}); err != nil {
		t.Fatal(err)
	}
	envB.wanted.Store([]scope.Scope{sc}, []datagram.GroupID{id})
	now := time.Unix(1000, 0)
	body := []byte("an event body")
	step(a, now, func() {
		a.publish(Request{Body: body, Size: len(body), Scope: sc, Class: datagram.ReliableOrdered}, now)
	})
	sent := envA.takeSent(addrA)
	if len(sent) != 1 {
		t.Fatalf("A sent %d datagrams, want 1 DATA", len(sent))
	}
	step(b, now, func() { b.receive(rxBatch{pkts: sent}, now) })
	c := b.Deliveries().Take()
	if c == nil || len(c.Deliveries) != 1 || c.Deliveries[0].Kind != DeliverBody || !bytes.Equal(c.Deliveries[0].Body, body) {
		t.Fatalf("B's deliveries: %+v", c)
	}
	later := now.Add(2 * ackInterval)
	step(b, later, func() { b.tick(later) })
	if dst := envB.lastDst(); len(dst) != 1 || dst[0] != addrA {
		t.Fatalf("B's ACK went to %v, want A's address %v", dst, addrA)
	}
	acks := envB.takeSent(netip.MustParseAddrPort("127.0.0.1:7002"))
	step(a, later, func() { a.receive(rxBatch{pkts: acks}, later) })
	st := a.senders[datagram.StreamKey{Instance: a.cfg.Instance, Group: id, Class: datagram.ReliableOrdered}]
	if p, ok := st.rx[b.cfg.Instance]; !ok || p.edge != 2 {
		t.Fatalf("A's receivers after the ACK: %+v", st.rx)
	}
	if _, placeholder := st.rx[datagram.InstanceID{}]; placeholder {
		t.Fatal("the start placeholder survived a real receiver's ACK")
	}
}

// TestUnicastDestinations: with Unicast, a DATA datagram goes to every
// peer that wants its group and has an address, never to this instance;
// without it, to the group's multicast address.
func TestUnicastDestinations(t *testing.T) {
	sc := scope.MustParse("/uni/")
	id := group.ID(sc)
	for _, unicast := range []bool{false, true} {
		e, env := newTestEngine(t, func(c *Config) { c.Unicast = unicast })
		peers := map[string]group.PeerState{
			"b":    {Version: 1, Instance: datagram.InstanceID{0xb}, Addr: netip.MustParseAddrPort("127.0.0.1:7011"), Groups: []datagram.GroupID{id}},
			"c":    {Version: 1, Instance: datagram.InstanceID{0xc}, Addr: netip.MustParseAddrPort("127.0.0.1:7012"), Groups: []datagram.GroupID{id}},
			"none": {Version: 1, Instance: datagram.InstanceID{0xd}, Groups: []datagram.GroupID{id}},
			"self": {Version: 1, Instance: e.cfg.Instance, Addr: netip.MustParseAddrPort("127.0.0.1:7013"), Groups: []datagram.GroupID{id}},
		}
		for name, st := range peers {
			if err := env.peers.Update(name, st); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Unix(1000, 0)
		step(e, now, func() {
			e.publish(Request{Body: []byte("x"), Size: 1, Scope: sc, Class: datagram.UnreliableUnordered}, now)
		})
		dst := env.lastDst()
		want := []netip.AddrPort{e.env.Groups.Addr(id)}
		if unicast {
			want = []netip.AddrPort{peers["b"].Addr, peers["c"].Addr}
		}
		if !sameAddrs(dst, want) {
			t.Errorf("unicast %v: sent to %v, want %v", unicast, dst, want)
		}
	}
}

// sameAddrs reports whether a and b hold the same addresses, in any order.
func sameAddrs(a, b []netip.AddrPort) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
