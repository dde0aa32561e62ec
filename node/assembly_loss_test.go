package node

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/faultnet"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/scope"
)

// TestLargeEventsOnManyReliableStreams: fragmented events on many reliable
// streams at once (unordered and ordered, one group per scope), over a
// network that loses, duplicates and reorders datagrams, all arrive whole.
// While holes wait for their repairs, partial events pile up on the
// receiving node: as many as the senders' flow windows have in flight,
// which must not be mistaken for a bound to enforce.
func TestLargeEventsOnManyReliableStreams(t *testing.T) {
	for _, ordered := range []bool{false, true} {
		t.Run(fmt.Sprintf("ordered=%v", ordered), func(t *testing.T) {
			largeEventsOnManyStreams(t, ordered)
		})
	}
}

func largeEventsOnManyStreams(t *testing.T, ordered bool) {
	const scopes, perScope = 24, 6
	net, nodes := startFaultNodes(t, 2, faultnet.Config{Seed: 21, MaxDatagram: DefaultLANDatagram,
		Faults: faultnet.Faults{Loss: 0.05, Duplicate: 0.02, Reorder: 0.05, ReorderDelay: time.Millisecond}},
		func(_ int, c *Config) {
			c.SocketAddr = "off"
			c.QoS, c.ExplicitQoS = QoS{Reliable: true, Ordered: ordered}, true
			c.Streams.Receivers.Receiver.NackTries = patientNackTries
		})
	a, b := nodes[0], nodes[1]
	var got collector
	scopeOf := func(i int) string { return fmt.Sprintf("/many/s%02d/", i%scopes) }
	for i := 0; i < scopes; i++ {
		sc := scopeOf(i)
		defer b.Subscribe(scope.MustParse(sc), got.handle)()
		testutil.WaitFor(t, 10*time.Second, "interest", func() bool { return a.interest().Wanted(groupID(sc)) })
	}
	const n = scopes * perScope
	for i := 0; i < n; i++ {
		if err := a.Publish(context.Background(), seqEvent(scopeOf(i), uint32(i), 30<<10+i*101)); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 30*time.Second, fmt.Sprintf("%d events", n), func() bool { return got.len() >= n })
	seen := map[uint32]bool{}
	for i := 0; i < got.len(); i++ {
		d := got.get(i).Data
		s := binary.BigEndian.Uint32(d)
		if seen[s] || !bytes.Equal(d, seqEvent("/", s, 30<<10+int(s)*101).Data) {
			t.Fatalf("event %d duplicated or damaged", s)
		}
		seen[s] = true
	}
	if got.len() != n {
		t.Fatalf("%d events, want %d", got.len(), n)
	}
	if s := net.Stats(); s.Lost == 0 {
		t.Fatalf("the network lost nothing: %+v", s)
	}
}

// TestReassemblyEvictionIsReported: an event that the reliable assembler's
// byte budget evicts is reported to the subscriptions of its stream as a
// loss (ReasonReassemblyEvicted) and counted, never lost silently: every
// event is delivered or covered by such a report.
func TestReassemblyEvictionIsReported(t *testing.T) {
	_, nodes := startFaultNodes(t, 2, faultnet.Config{Seed: 4, MaxDatagram: DefaultLANDatagram,
		Faults: faultnet.Faults{Loss: 0.1, Reorder: 0.1, ReorderDelay: time.Millisecond}},
		func(_ int, c *Config) {
			c.SocketAddr = "off"
			c.QoS, c.ExplicitQoS = QoS{Reliable: true}, true
			c.Streams.Receivers.Receiver.NackTries = patientNackTries
			c.Assembly.MaxBufferedBytes, c.Assembly.MaxEventSize = 300<<10, 200<<10
		})
	a, b := nodes[0], nodes[1]
	var got collector
	var mu sync.Mutex
	var evicted int
	defer b.Subscribe(scope.MustParse("/evict/"), got.handle, WithLoss(func(l LossReport) {
		if l.Reason == qos.ReasonReassemblyEvicted && l.Stream.Instance == a.Instance() && l.Range.First <= l.Range.Last {
			mu.Lock()
			evicted++
			mu.Unlock()
		}
	}))()
	testutil.WaitFor(t, 10*time.Second, "interest", func() bool { return a.interest().Wanted(groupID("/evict/")) })
	const n = 40
	for i := 0; i < n; i++ {
		if err := a.Publish(context.Background(), seqEvent("/evict/", uint32(i), 100<<10)); err != nil {
			t.Fatal(err)
		}
	}
	accounted := func() int {
		mu.Lock()
		defer mu.Unlock()
		return got.len() + evicted
	}
	testutil.WaitFor(t, 30*time.Second, "every event delivered or reported", func() bool { return accounted() >= n })
	mu.Lock()
	defer mu.Unlock()
	if evicted == 0 || got.len()+evicted != n {
		t.Fatalf("%d delivered, %d reported evicted, of %d", got.len(), evicted, n)
	}
	if v := metricValue(t, b, "rsbd_loss_reports_total", "reason", "reassembly"); int(v) != evicted {
		t.Fatalf("loss_reports_total{reason=reassembly} %v, want %d", v, evicted)
	}
	t.Logf("%d delivered, %d evicted and reported", got.len(), evicted)
}
