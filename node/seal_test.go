package node

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/faultnet"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

func sealKey(id byte) datagram.Key {
	k := datagram.Key{ID: id}
	for i := range k.Secret {
		k.Secret[i] = id ^ byte(i)
	}
	return k
}

// sealedNodes starts k nodes on net with keys and a cluster label,
// reliable and ordered, without socket servers.
func sealedNodes(t *testing.T, k int, net *faultnet.Network, keys ...datagram.Key) []*Node {
	t.Helper()
	return startNodes(t, k, func(_ int, c *Config) {
		c.QoS, c.ExplicitQoS = QoS{Reliable: true, Ordered: true}, true
		c.SocketAddr = "off"
		c.MaxDatagram = DefaultLANDatagram
		c.Keys, c.ClusterLabel = keys, "lab"
		c.NewConn = func(_ transport.Config, h transport.Handler) (transport.Conn, error) {
			return net.Listen(netip.AddrPort{}, h)
		}
	})
}

func newSealNet(t *testing.T) *faultnet.Network {
	t.Helper()
	net, err := faultnet.New(faultnet.Config{Seed: 3, MaxDatagram: DefaultLANDatagram})
	if err != nil {
		t.Fatal(err)
	}
	return net
}

// warmUpAll publishes event 0 from a until every collector has one, then a
// fence every collector waits for; it returns each collector's count then.
func warmUpAll(t *testing.T, a *Node, got ...*collector) []int {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, "first event everywhere", func() bool {
		for _, g := range got {
			if g.len() == 0 {
				publishSeq(t, a, 0)
				return false
			}
		}
		return true
	})
	publishSeq(t, a, fenceSeq)
	base := make([]int, len(got))
	for i, g := range got {
		testutil.WaitFor(t, 10*time.Second, "the warm-up fence", func() bool {
			return binary.BigEndian.Uint32(g.get(g.len()-1).Data) == fenceSeq
		})
		base[i] = g.len()
	}
	return base
}

// checkExactlyOnceInOrder checks that got holds events first..last after
// base, each once and in order.
func checkExactlyOnceInOrder(t *testing.T, got *collector, base int, first, last uint32) {
	t.Helper()
	want := int(last - first + 1)
	testutil.WaitFor(t, 30*time.Second, "every event", func() bool { return got.len() >= base+want })
	if got.len() != base+want {
		t.Fatalf("%d events, want %d", got.len()-base, want)
	}
	for i := range want {
		if s := binary.BigEndian.Uint32(got.get(base + i).Data); s != first+uint32(i) {
			t.Fatalf("event %d is %d, want %d", i, s, first+uint32(i))
		}
	}
}

// TestSealedKeyRotation rotates the key of a running three-node cluster in
// the three steps an operator takes (add the new key everywhere, make it
// the primary everywhere, remove the old one) while one node publishes:
// both others receive every event once and in order, and nothing is
// refused on the way.
func TestSealedKeyRotation(t *testing.T) {
	net := newSealNet(t)
	nodes := sealedNodes(t, 3, net, sealKey(1))
	a := nodes[0]
	var got [2]collector
	defer nodes[1].Subscribe(scope.MustParse("/q/"), got[0].handle)()
	defer nodes[2].Subscribe(scope.MustParse("/q/"), got[1].handle)()
	base := warmUpAll(t, a, &got[0], &got[1])
	steps := [][]datagram.Key{
		{sealKey(1), sealKey(2)},
		{sealKey(2), sealKey(1)},
		{sealKey(2)},
	}
	seq := uint32(1)
	const perStep = 150
	for _, keys := range append(steps, nil) {
		for range perStep {
			publishSeq(t, a, seq)
			seq++
		}
		// Each step is in force everywhere before the next, as an
		// operator makes sure: what was sealed before it has arrived.
		for i := range got {
			checkExactlyOnceInOrder(t, &got[i], base[i], 1, seq-1)
		}
		for _, n := range nodes {
			if keys != nil {
				if err := n.SetKeys(keys); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for i, n := range nodes {
		if s := n.GuardStats(); s.Auth+s.UnknownKey+s.Replay+s.Unsealed != 0 {
			t.Errorf("node %d refused datagrams during the rotation: %+v", i, s)
		}
		if p := n.GuardStats().Sealed; p == 0 {
			t.Errorf("node %d sealed nothing", i)
		}
	}
	if err := a.SetKeys(nil); err == nil {
		t.Error("SetKeys(nil) accepted")
	}
}

// tap is a raw endpoint on the test network that hears every group, as an
// eavesdropper joined to the multicast groups would, and can inject
// datagrams.
type tap struct {
	ep   *faultnet.Endpoint
	mu   sync.Mutex
	seen [][]byte
}

func newTap(t *testing.T, net *faultnet.Network, n *Node) *tap {
	t.Helper()
	tp := &tap{}
	ep, err := net.Listen(netip.AddrPort{}, func(batch []transport.Packet) {
		tp.mu.Lock()
		defer tp.mu.Unlock()
		for _, p := range batch {
			tp.seen = append(tp.seen, bytes.Clone(p.Data))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	for _, g := range n.pool.Addrs() {
		if err := ep.Join(g); err != nil {
			t.Fatal(err)
		}
	}
	tp.ep = ep
	return tp
}

// data returns the DATA datagrams of instance inst heard so far.
func (tp *tap) data(inst datagram.InstanceID) [][]byte {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var out [][]byte
	for _, b := range tp.seen {
		if len(b) > datagram.HeaderSize && datagram.Kind(b[1]) == datagram.KindData && datagram.InstanceID(b[8:24]) == inst {
			out = append(out, b)
		}
	}
	return out
}

// TestSealedNodeRefusesForgeries runs two sealed nodes and an eavesdropper
// on their network: the eavesdropper never sees a payload, and what it
// injects at the receiver (a replay, a flipped bit, a forgery, a datagram
// of another label or key, a datagram in clear, a replay after the stream
// moved on) is never delivered, never reaches the stream machines, and is
// counted under its reason. A node without the key cannot join.
func TestSealedNodeRefusesForgeries(t *testing.T) {
	net := newSealNet(t)
	nodes := sealedNodes(t, 2, net, sealKey(1))
	a, b := nodes[0], nodes[1]
	tp := newTap(t, net, a)
	var got collector
	defer b.Subscribe(scope.MustParse("/q/"), got.handle)()
	base := warmUpAll(t, a, &got)[0]
	for i := uint32(1); i <= 20; i++ {
		publishMarked(t, a, i)
	}
	testutil.WaitFor(t, 10*time.Second, "marked events", func() bool { return got.len() == base+20 })
	captured := tp.data(a.Instance())
	if len(captured) == 0 {
		t.Fatal("the tap heard no DATA datagram")
	}
	for _, c := range captured {
		if bytes.Contains(c, []byte("MARKED-PAYLOAD")) {
			t.Fatal("a payload is readable on the wire")
		}
	}
	last := captured[len(captured)-1]
	// The receiver checks a datagram's counter before it spends a
	// decryption: tampered copies of a datagram it has seen count as
	// replays. These carry counters it has not seen, so only
	// authentication refuses them: one bit of the counter flipped, and a
	// body rewritten under a new counter.
	counterAt := len(last) - datagram.SealOverhead + 16 + 8
	flipped := bytes.Clone(last)
	flipped[counterAt] ^= 0x80
	forged := bytes.Clone(last)
	copy(forged[datagram.HeaderSize:], "MARKED-PAYLOAD forged")
	binary.BigEndian.PutUint64(forged[counterAt:], 1<<40)
	// Sealed right, but for another label or with a key b does not hold.
	plain := markedDatagram(t, a.Instance(), 1<<20)
	otherLabel := sealWith(t, "other", sealKey(1), plain)
	otherKey := sealWith(t, "lab", sealKey(7), plain)
	inject := func(name string, raw []byte, counter func(transport.GuardStats) uint64) {
		t.Helper()
		before, dups := b.GuardStats(), b.eng.Stats().Receivers.Duplicates
		if err := tp.ep.Send([]netip.AddrPort{b.DataAddr()}, raw); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 10*time.Second, name+" counted", func() bool { return counter(b.GuardStats()) == counter(before)+1 })
		if n := got.len(); n != base+20 {
			t.Fatalf("%s: %d events delivered, want %d", name, n-base, 20)
		}
		if d := b.eng.Stats().Receivers.Duplicates; d != dups {
			t.Fatalf("%s reached the stream machines (%d duplicates, was %d)", name, d, dups)
		}
	}
	replay := func(s transport.GuardStats) uint64 { return s.Replay }
	auth := func(s transport.GuardStats) uint64 { return s.Auth }
	inject("replay", last, replay)
	inject("flipped bit", flipped, auth)
	inject("forgery", forged, auth)
	inject("another label", otherLabel, auth)
	inject("unknown key", otherKey, func(s transport.GuardStats) uint64 { return s.UnknownKey })
	inject("clear datagram", plain, func(s transport.GuardStats) uint64 { return s.Unsealed })
	// The stream moves on, and the first captured datagram comes back.
	for i := uint32(21); i <= 300; i++ {
		publishMarked(t, a, i)
	}
	testutil.WaitFor(t, 10*time.Second, "later events", func() bool { return got.len() == base+300 })
	base += 280
	inject("replay after the stream moved on", captured[0], replay)
	if v := metricValue(t, b, "rsbd_drops_total", "reason", "replay"); v < 2 {
		t.Errorf("rsbd_drops_total{reason=replay} = %v", v)
	}

	// A node without the key hears nothing it can read and cannot join.
	pool := a.cfg.Group
	c := testConfig(t, pool)
	c.SocketAddr = "off"
	c.NewConn = func(_ transport.Config, h transport.Handler) (transport.Conn, error) {
		return net.Listen(netip.AddrPort{}, h)
	}
	outsider, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer outsider.Close()
	if n, err := outsider.Join(a.GossipAddr().String()); err == nil || n != 0 {
		t.Fatalf("a node without the key joined: %d, %v", n, err)
	}
	if len(a.Members()) != 1 {
		t.Fatalf("a's members: %v", a.Members())
	}

	// a leaves: replays of its run now come from no member.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "a gone", func() bool { return len(b.Members()) == 0 })
	inject("replay of a departed sender", captured[1], func(s transport.GuardStats) uint64 { return s.UnknownSender })
}

// publishMarked publishes event seq whose payload carries a marker to look
// for on the wire.
func publishMarked(t *testing.T, n *Node, seq uint32) {
	t.Helper()
	publishSeqData(t, n, seq, []byte(fmt.Sprintf("MARKED-PAYLOAD-%06d", seq)))
}

func markedDatagram(t *testing.T, inst datagram.InstanceID, seq uint64) []byte {
	t.Helper()
	b, err := datagram.Append(nil, &datagram.Datagram{Kind: datagram.KindData, Seq: seq,
		Stream:  datagram.StreamKey{Instance: inst, Group: groupID("/q/"), Class: datagram.ReliableOrdered},
		Records: [][]byte{[]byte("MARKED-PAYLOAD injected")}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sealWith(t *testing.T, label string, k datagram.Key, plain []byte) []byte {
	t.Helper()
	s, err := datagram.NewSealer(label, []datagram.Key{k})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Seal(nil, plain, datagram.Seal{Epoch: uint64(time.Now().UnixNano()), Counter: 1})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSealedConfigValidate(t *testing.T) {
	for name, c := range map[string]Config{
		"repeated key id":   {Keys: []datagram.Key{sealKey(1), sealKey(1)}},
		"long label":        {Keys: []datagram.Key{sealKey(1)}, ClusterLabel: string(make([]byte, 256))},
		"datagram too tiny": {Keys: []datagram.Key{sealKey(1)}, MaxDatagram: 520},
	} {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := (Config{Keys: []datagram.Key{sealKey(1)}, ClusterLabel: "lab"}).Validate(); err != nil {
		t.Errorf("valid keyed config: %v", err)
	}
	n, err := New(Config{SocketAddr: "off", GossipAddr: "127.0.0.1:0", DataAddr: "127.0.0.1:0", LocalProfile: true, Group: testPool()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if n.Sealed() || n.GuardStats() != (transport.GuardStats{}) {
		t.Fatal("a node without keys seals")
	}
	if err := n.SetKeys([]datagram.Key{sealKey(1)}); !errors.Is(err, ErrNoKeys) {
		t.Fatalf("SetKeys without keys: %v", err)
	}
}

// TestSealedSenderRestart: a sender restarts under the same name (a new
// instance, a newer epoch). The receiver takes the new run's events, and
// a datagram captured from the old run, replayed, is refused.
func TestSealedSenderRestart(t *testing.T) {
	net := newSealNet(t)
	cfg := func(name string) Config {
		c := testConfig(t, testPool())
		c.Name, c.SocketAddr, c.MaxDatagram = name, "off", DefaultLANDatagram
		c.QoS, c.ExplicitQoS = QoS{Reliable: true, Ordered: true}, true
		c.Keys, c.ClusterLabel = []datagram.Key{sealKey(1)}, "lab"
		c.NewConn = func(_ transport.Config, h transport.Handler) (transport.Conn, error) {
			return net.Listen(netip.AddrPort{}, h)
		}
		return c
	}
	rc := cfg("receiver")
	r, err := New(rc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// start runs the sender; a restart binds the gossip address of the
	// previous run, as a restarted daemon does.
	start := func(gossip string) *Node {
		c := cfg("sender")
		if gossip != "" {
			c.GossipAddr = gossip
		}
		c.Group = rc.Group
		c.Join = []string{r.GossipAddr().String()}
		s, err := New(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		testutil.WaitFor(t, 10*time.Second, "the sender a member", func() bool {
			name, ok := r.mem.Sender(s.Instance())
			return ok && name == "sender"
		})
		return s
	}
	tp := newTap(t, net, r)
	var got collector
	defer r.Subscribe(scope.MustParse("/q/"), got.handle)()
	first := start("")
	base := warmUpAll(t, first, &got)[0]
	publishMarked(t, first, 1)
	testutil.WaitFor(t, 10*time.Second, "the first run's event", func() bool { return got.len() == base+1 })
	old := tp.data(first.Instance())
	if len(old) == 0 {
		t.Fatal("nothing captured of the first run")
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := start(first.GossipAddr().String())
	base2 := warmUpAll(t, second, &got)[0]
	before := r.GuardStats()
	if err := tp.ep.Send([]netip.AddrPort{r.DataAddr()}, old[len(old)-1]); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the old run's datagram refused", func() bool {
		return r.GuardStats().UnknownSender == before.UnknownSender+1
	})
	publishMarked(t, second, 2)
	testutil.WaitFor(t, 10*time.Second, "the second run's event", func() bool { return got.len() == base2+1 })
	if s := binary.BigEndian.Uint32(got.get(base2).Data); s != 2 {
		t.Fatalf("delivered event %d, want 2", s)
	}
}
