package faultnet

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/transport"
)

var group = netip.MustParseAddrPort("239.255.7.1:6000")

// arrival record of one delivered datagram.
type got struct {
	at   time.Time
	from netip.AddrPort
	data string
}

// recorder is a Handler that records what it receives.
type recorder struct {
	mu   sync.Mutex
	pkts []got
}

func (r *recorder) handle(batch []transport.Packet) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range batch {
		r.pkts = append(r.pkts, got{at: now, from: p.From, data: string(p.Data)})
	}
}

func (r *recorder) all() []got {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]got(nil), r.pkts...)
}

// counts returns how often each payload arrived.
func (r *recorder) counts() map[string]int {
	m := map[string]int{}
	for _, p := range r.all() {
		m[p.data]++
	}
	return m
}

// newNetwork returns a Network for a test. Unless the test sets one, the
// queue limit is raised so that bulk sends, which outpace the delivery
// goroutine, lose nothing to it.
func newNetwork(t testing.TB, cfg Config) *Network {
	t.Helper()
	if cfg.QueueLimit == 0 {
		cfg.QueueLimit = 1 << 20
	}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// listen creates an endpoint with a recorder, closed at the end of the test.
func listen(t testing.TB, n *Network) (*Endpoint, *recorder) {
	t.Helper()
	r := &recorder{}
	e, err := n.Listen(netip.AddrPort{}, r.handle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e, r
}

func send(t testing.TB, e *Endpoint, dst netip.AddrPort, payload string) {
	t.Helper()
	if err := e.Send([]netip.AddrPort{dst}, []byte(payload)); err != nil {
		t.Fatal(err)
	}
}

// sendN sends n numbered datagrams "0".."n-1" from e to dst.
func sendN(t testing.TB, e *Endpoint, dst netip.AddrPort, n int) {
	t.Helper()
	for i := range n {
		send(t, e, dst, fmt.Sprint(i))
	}
}

// advance lets the bubble's virtual clock run for d (the bubble's time only
// moves when every goroutine is blocked, so this costs no real time).
func advance(d time.Duration) {
	<-time.After(d)
}
