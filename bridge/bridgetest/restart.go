package bridgetest

import (
	"testing"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/internal/testutil"
)

// PublishAcrossRestart publishes events 0 to 2*half-1 (Event, 64 bytes)
// through inf to the outbound bridge out, named name in m, across a
// restart of its broker: the first half while the broker runs, until out
// counted them all sent; then stop; the second half while the broker is
// down, until out reports itself not ready; then start.
func PublishAcrossRestart(t testing.TB, inf *client.Informer, out *bridge.Bridge, m *bridge.Metrics, name string,
	half int, stop, start func()) {
	t.Helper()
	for i := range half {
		PublishCE(t, inf, Event(i, 64))
	}
	testutil.WaitFor(t, Timeout, "first half sent", func() bool {
		return Value(m.Messages, name, bridge.DirOut) == float64(half)
	})
	stop()
	for i := half; i < 2*half; i++ {
		PublishCE(t, inf, Event(i, 64))
	}
	testutil.WaitFor(t, Timeout, "down reported", func() bool { return out.Ready() != nil })
	start()
}

// ReadInOrder reads events off rd until n distinct ones (by Seq) came and
// returns how often each came. An event may come again, but the first
// arrivals must come in order: the test fails otherwise.
func ReadInOrder(t testing.TB, rd *client.Reader, n int) map[int]int {
	t.Helper()
	seen := map[int]int{}
	last := -1
	for len(seen) < n {
		_, e := ReadCE(t, rd)
		s := Seq(e)
		if seen[s] == 0 && s != last+1 {
			t.Fatalf("event %d first arrived after %d", s, last)
		}
		if seen[s] == 0 {
			last = s
		}
		seen[s]++
	}
	return seen
}

// RoundTripAcrossRestart runs the outbound bridge out and the inbound
// bridge in, whose routes meet at one address of srv, on a bus of their
// own with metrics m; publishes 2*half events to out's scope across a
// restart of srv (PublishAcrossRestart) and reads them off in's scope in
// order (ReadInOrder). It returns how often each event came.
func RoundTripAcrossRestart(t testing.TB, srv *Server, out, in bridge.Config, m *bridge.Metrics, half int) map[int]int {
	t.Helper()
	bus := Bus(t)
	rd := Reader(t, bus, in.In.Scope)
	bo := Run(t, bus, out, m)
	Run(t, bus, in, m)
	inf := Informer(t, bus, out.Out.Scope)
	PublishAcrossRestart(t, inf, bo, m, out.Name, half, srv.Stop, srv.Start)
	return ReadInOrder(t, rd, 2*half)
}
