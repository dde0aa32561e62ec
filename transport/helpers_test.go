package transport

import (
	"bytes"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"
	"time"
)

// timeout bounds every wait of the tests: generous, since the machine is
// shared and runs with -race.
const timeout = 20 * time.Second

var (
	loopback = netip.MustParseAddr("127.0.0.1")
	quiet    = slog.New(slog.DiscardHandler)
)

// sink collects received datagrams (copied) in a channel.
type sink struct {
	ch chan Packet
}

func newSink() *sink { return &sink{ch: make(chan Packet, 8192)} }

func (s *sink) handle(batch []Packet) {
	for _, p := range batch {
		s.ch <- Packet{Data: bytes.Clone(p.Data), From: p.From}
	}
}

// next returns the next datagram or fails the test after timeout.
func (s *sink) next(t testing.TB) Packet {
	t.Helper()
	select {
	case p := <-s.ch:
		return p
	case <-time.After(timeout):
		t.Fatalf("no datagram within %v", timeout)
		return Packet{}
	}
}

// open opens an Endpoint with cfg and registers its Close.
func open(t testing.TB, cfg Config, h Handler) *Endpoint {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	e, err := Open(cfg, h)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// unicastAddr is the loopback address peers reach e at.
func unicastAddr(e *Endpoint) netip.AddrPort {
	return netip.AddrPortFrom(loopback, e.LocalAddr().Port())
}

// freePort returns a UDP port that was free a moment ago, so tests running
// in parallel (and in other packages) use distinct multicast ports.
func freePort(t testing.TB) uint16 {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return uint16(c.LocalAddr().(*net.UDPAddr).Port)
}

// testGroups returns n distinct groups 239.255.r.i on one free port.
func testGroups(t testing.TB, n int) []netip.AddrPort {
	t.Helper()
	port := freePort(t)
	r := byte(rand.IntN(256))
	gs := make([]netip.AddrPort, n)
	for i := range gs {
		gs[i] = netip.AddrPortFrom(netip.AddrFrom4([4]byte{239, 255, r, byte(i + 1)}), port)
	}
	return gs
}

// waitStats polls e's Stats until ok holds or the timeout passes.
func waitStats(t testing.TB, e *Endpoint, what string, ok func(Stats) bool) Stats {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for {
		s := e.Stats()
		if ok(s) {
			return s
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s: not reached within %v: %+v", what, timeout, s)
		}
	}
}

func mustSend(t testing.TB, e *Endpoint, dst []netip.AddrPort, bufs ...[]byte) {
	t.Helper()
	if err := e.Send(dst, bufs...); err != nil {
		t.Fatalf("Send: %v", err)
	}
}

func mustJoin(t testing.TB, e *Endpoint, gs ...netip.AddrPort) {
	t.Helper()
	for _, g := range gs {
		if err := e.Join(g); err != nil {
			t.Fatalf("Join %v: %v", g, err)
		}
	}
}
