package node

import (
	"net"
	"net/netip"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/rsbd/rsbd/group/membership"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

// membershipValues gathers n's membership families: family name, then
// label value ("" for an unlabelled family) to value.
func membershipValues(t *testing.T, n *Node) map[string]map[string]float64 {
	t.Helper()
	mfs, err := n.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for _, mf := range mfs {
		for _, f := range membership.Families() {
			if mf.GetName() != f.Name {
				continue
			}
			out[f.Name] = map[string]float64{}
			for _, m := range mf.GetMetric() {
				out[f.Name][labelValue(m, f.Label)] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestMembershipMetrics: every membership family is exported with each of
// its label values, the values are the membership counters, and a peer's
// Subscribe shows as states applied (or deltas) on the other node and as
// a push on the subscriber.
func TestMembershipMetrics(t *testing.T) {
	nodes := startNodes(t, 2, nil)
	a, b := nodes[0], nodes[1]
	defer b.Subscribe(scope.MustParse("/metrics/members/"), func(*notification.Event) {})()

	got := membershipValues(t, a)
	for _, f := range membership.Families() {
		if len(got[f.Name]) != len(f.Values) {
			t.Fatalf("%s: %v, want %d values", f.Name, got[f.Name], len(f.Values))
		}
	}
	st := a.mem.Stats()
	for _, f := range membership.Families() {
		for _, v := range f.Values {
			// Counters only grow: the scrape came first.
			if g, now := got[f.Name][v.Label], float64(v.Value(st)); g > now {
				t.Errorf("%s{%s=%q} = %v, above the counter's %v", f.Name, f.Label, v.Label, g, now)
			}
		}
	}
	testutil.WaitFor(t, 10*time.Second, "the peer's state applied", func() bool {
		v := membershipValues(t, a)
		return v["rsbd_membership_states_total"]["applied"]+v["rsbd_membership_deltas_total"]["applied"] > 0
	})
	// A push is counted once its send returned, which may be after the
	// peer applied and confirmed it.
	testutil.WaitFor(t, 10*time.Second, "the subscriber's push counted", func() bool {
		return membershipValues(t, b)["rsbd_membership_pushes_total"]["sent"] > 0
	})
}

// TestOversizeDatagramCounted: a datagram above the node's datagram size,
// sent to its data address, is dropped as rsbd_drops_total{reason=
// "datagram_too_large"}.
func TestOversizeDatagramCounted(t *testing.T) {
	c := testConfig(t, testPool())
	c.MaxDatagram = 1400
	n, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	conn, err := net.Dial("udp", n.DataAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(make([]byte, 3000)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the oversize datagram counted", func() bool {
		return metricValue(t, n, "rsbd_drops_total", "reason", "datagram_too_large") == 1
	})
}

// TestControlBeforeEngine: an ACK or NACK that reaches the transport's
// reader before the node's engine exists (the readers start first; a
// restarted daemon's peers may still address its port) is dropped as
// rsbd_drops_total{reason="unknown_stream"}, and the node starts.
func TestControlBeforeEngine(t *testing.T) {
	var sent int
	for _, kind := range []datagram.Kind{datagram.KindAck, datagram.KindNack} {
		d := datagram.Datagram{Kind: kind, Stream: datagram.StreamKey{Instance: datagram.InstanceID{1}, Class: datagram.ReliableOrdered},
			Target: datagram.InstanceID{2}, Edge: 1}
		if kind == datagram.KindNack {
			d.Ranges = []datagram.Range{{First: 1, Last: 2}}
		}
		b, err := datagram.Append(nil, &d)
		if err != nil {
			t.Fatal(err)
		}
		c := testConfig(t, testPool())
		c.NewConn = func(tc transport.Config, h transport.Handler) (transport.Conn, error) {
			conn, err := transport.Open(tc, h)
			if err == nil {
				h([]transport.Packet{{Data: b, From: netip.MustParseAddrPort("127.0.0.1:9")}})
				sent++
			}
			return conn, err
		}
		n, err := New(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := metricValue(t, n, "rsbd_drops_total", "reason", "unknown_stream"); got != 1 {
			t.Errorf("%v before the engine: unknown_stream drops %v, want 1", kind, got)
		}
		n.Close()
	}
	if sent != 2 {
		t.Fatalf("%d early datagrams handed over, want 2", sent)
	}
}

// TestSocketReceivedCounters: the socket path's received events and bytes
// are the frames the clients sent, counted once however often the metrics
// are scraped.
func TestSocketReceivedCounters(t *testing.T) {
	n := startNodes(t, 1, nil)[0]
	got := make(chan struct{}, 3)
	defer n.Subscribe(scope.MustParse("/count/"), func(*notification.Event) { got <- struct{}{} })()
	c := dialAddr(t, n.SocketAddr().String())
	var size int
	for i, data := range []string{"a", "bb", "ccc"} {
		body, err := notification.Marshal(testutil.Event("/count/", uint32(i+1), []byte(data)))
		if err != nil {
			t.Fatal(err)
		}
		size += len(body)
		if err := c.Send(body); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			t.Fatal("the embedded subscription did not get all three events")
		}
	}
	for range 2 {
		ev := metricValue(t, n, "rsbd_received_events_total", "path", "socket")
		by := metricValue(t, n, "rsbd_received_bytes_total", "path", "socket")
		if ev != 3 || by != float64(size) {
			t.Fatalf("socket path received %v events, %v bytes; want 3, %d", ev, by, size)
		}
	}
}

// TestStreamsGauge: rsbd_streams counts a publisher's sender stream and,
// at the subscriber, the receive stream, which goes once the publisher's
// node has left.
func TestStreamsGauge(t *testing.T) {
	nodes := startNodes(t, 2, nil)
	a, b := nodes[0], nodes[1]
	got := make(chan struct{}, 1)
	defer b.Subscribe(scope.MustParse("/metrics/streams/"), func(*notification.Event) {
		select {
		case got <- struct{}{}:
		default:
		}
	})()
	testutil.WaitFor(t, 10*time.Second, "an event of a at b", func() bool {
		if err := a.Publish(t.Context(), testutil.Event("/metrics/streams/x/", 1, []byte("s"))); err != nil {
			t.Fatal(err)
		}
		select {
		case <-got:
			return true
		case <-time.After(20 * time.Millisecond):
			return false
		}
	})
	if s := metricValue(t, a, "rsbd_streams", "side", "send"); s < 1 {
		t.Fatalf("a: %v send streams, want at least 1", s)
	}
	if r := metricValue(t, b, "rsbd_streams", "side", "receive"); r < 1 {
		t.Fatalf("b: %v receive streams, want at least 1", r)
	}
	a.Close()
	// On a loaded host a's leave can be lost; b then frees the streams
	// once its probes declare a failed, which takes longer.
	testutil.WaitFor(t, time.Minute, "b freeing a's streams", func() bool {
		return metricValue(t, b, "rsbd_streams", "side", "receive") == 0
	})
}
