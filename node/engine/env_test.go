package engine

import (
	"net/netip"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/node/interest"
	"github.com/rsbd/rsbd/transport/datagram"
)

// recordingConn is a transport.Conn that keeps what is sent through it.
type recordingConn struct {
	mu    sync.Mutex
	sends []sent
}

// sent is one datagram sent and where to.
type sent struct {
	dst  []netip.AddrPort
	data []byte
}

func (c *recordingConn) Send(dst []netip.AddrPort, bufs ...[]byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range bufs {
		c.sends = append(c.sends, sent{dst: append([]netip.AddrPort(nil), dst...), data: append([]byte(nil), b...)})
	}
	return nil
}

func (c *recordingConn) Join(netip.AddrPort) error  { return nil }
func (c *recordingConn) Leave(netip.AddrPort) error { return nil }
func (c *recordingConn) LocalAddr() netip.AddrPort {
	return netip.MustParseAddrPort("127.0.0.1:7000")
}
func (c *recordingConn) Close() error { return nil }

// recordingSinks is an engine.Sinks that keeps the deliveries it is given.
type recordingSinks struct {
	mu         sync.Mutex
	delivered  []Delivery
	backlogged bool
}

func (s *recordingSinks) Deliver(ds []Delivery, _ bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delivered = append(s.delivered, ds...)
}
func (s *recordingSinks) InlineLimit() int            { return 64 << 10 }
func (s *recordingSinks) Answered()                   {}
func (s *recordingSinks) Backlogged(reserve int) bool { return s.backlogged }

// testEnv is the recording environment of an engine under test.
type testEnv struct {
	conn   *recordingConn
	sinks  *recordingSinks
	peers  *group.Interest
	wanted *interest.WantedSet
	reg    *prometheus.Registry
}

// newTestEngine returns an engine with a fresh instance id and a recording
// environment, its Config adjusted by set (may be nil). Its goroutine does
// not run: tests call its steps with the time they choose.
func newTestEngine(t testing.TB, set func(*Config)) (*Engine, *testEnv) {
	t.Helper()
	peers, err := group.NewInterest(group.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := group.NewPool(group.Config{})
	if err != nil {
		t.Fatal(err)
	}
	env := &testEnv{conn: new(recordingConn), sinks: new(recordingSinks), peers: peers,
		wanted: new(interest.WantedSet), reg: metrics.NewRegistry()}
	env.wanted.Store(nil, nil)
	cfg := Config{Instance: datagram.InstanceID{0xee, 1}}
	if set != nil {
		set(&cfg)
	}
	e, err := New(cfg, Env{
		Conn:     env.conn,
		Groups:   pool,
		Interest: func() group.InterestReader { return env.peers },
		Wanted:   env.wanted,
		Sinks:    env.sinks,
		Metrics:  metrics.New(env.reg),
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, env
}

// drops returns rsbd_drops_total{reason} of env's registry.
func (env *testEnv) drops(t testing.TB, reason string) float64 {
	t.Helper()
	mfs, err := env.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "rsbd_drops_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if labelValue(m, "reason") == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no series rsbd_drops_total{reason=%q}", reason)
	return 0
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
