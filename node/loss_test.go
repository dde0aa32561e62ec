package node

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/faultnet"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport"
)

// TestBlackoutLongerThanRetention cuts the receiver off for longer than the
// sender retains datagrams: the subscription must be told of the loss with a
// LossReport, and the stream must resume afterwards.
func TestBlackoutLongerThanRetention(t *testing.T) {
	net, err := faultnet.New(faultnet.Config{Seed: 3, MaxDatagram: DefaultLANDatagram})
	if err != nil {
		t.Fatal(err)
	}
	var addrs []netip.AddrPort
	nodes := startNodes(t, 2, func(_ int, c *Config) {
		c.QoS, c.ExplicitQoS = QoS{Reliable: true, Ordered: true}, true
		c.SocketAddr = "off"
		c.MaxDatagram = DefaultLANDatagram
		c.Streams.Sender.RetainAge = 100 * time.Millisecond
		c.NewConn = func(_ transport.Config, h transport.Handler) (transport.Conn, error) {
			ep, err := net.Listen(netip.AddrPort{}, h)
			if err == nil {
				addrs = append(addrs, ep.LocalAddr())
			}
			return ep, err
		}
	})
	a, b := nodes[0], nodes[1]
	var got collector
	var mu sync.Mutex
	var losses []LossReport
	defer b.Subscribe(scope.MustParse("/q/"), got.handle, WithLoss(func(l LossReport) {
		mu.Lock()
		losses = append(losses, l)
		mu.Unlock()
	}))()
	base := warmUp(t, a, &got)
	net.Blackout(addrs[1], 400*time.Millisecond)
	seq := uint32(1)
	start := time.Now()
	// Publish through the blackout and past it until events flow again.
	testutil.WaitFor(t, 20*time.Second, "stream resumes after the blackout", func() bool {
		publishSeq(t, a, seq)
		seq++
		return time.Since(start) > 600*time.Millisecond && got.len() > base &&
			binary.BigEndian.Uint32(got.get(got.len()-1).Data) > seq-50
	})
	mu.Lock()
	defer mu.Unlock()
	if len(losses) == 0 {
		t.Fatal("no loss report after a blackout longer than retention")
	}
	lost := uint64(0)
	for _, l := range losses {
		lost += l.Range.Len()
		if l.Stream.Instance != a.Instance() {
			t.Fatalf("loss report names sender %x, want %x", l.Stream.Instance, a.Instance())
		}
	}
	// Every event is either delivered or inside a reported range: delivered
	// events keep their order and nothing is delivered twice.
	prev := uint32(0)
	for i := base; i < got.len(); i++ {
		s := binary.BigEndian.Uint32(got.get(i).Data)
		if s <= prev {
			t.Fatalf("event %d after %d", s, prev)
		}
		prev = s
	}
	t.Logf("published %d, delivered %d, %d loss reports covering %d datagrams", seq, got.len(), len(losses), lost)
}
