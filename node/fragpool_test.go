package node

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/faultnet"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

// TestRecycledFragmentsOverALossyNetwork: an embedded publisher's large
// events go over a network that loses, duplicates and reorders datagrams,
// with senders keeping few acknowledged datagrams, so that fragment
// buffers go back to the pool and are reused while repairs still flow.
// Every event arrives once and intact (a buffer reused while a stream
// still held it would send another event's bytes as a repair), buffers
// were recycled, and the engine tracks no more datagrams than its streams
// retain.
func TestRecycledFragmentsOverALossyNetwork(t *testing.T) {
	net, a, got := lossyPair(t, 29, "/recycle/")
	const n = 200
	for i := range n {
		if err := a.Publish(context.Background(), testutil.Event("/recycle/", uint32(i), recycleData(i))); err != nil {
			t.Fatal(err)
		}
	}
	checkIntact(t, got, n, recycleData)
	buf := a.eng.Buffers()
	recycled, tracked := buf.Recycled, buf.Tracked
	if recycled == 0 {
		t.Fatal("no fragment buffer went back to the pool")
	}
	if retained := retainedDatagrams(a); tracked > retained {
		t.Fatalf("%d datagrams tracked for their buffers, %d retained", tracked, retained)
	}
	testutil.WaitFor(t, 10*time.Second, "recycled buffers in the metrics", func() bool {
		return gatherCounter(t, a, "rsbd_fragment_buffers_recycled_total") > 0
	})
	if s := net.Stats(); s.Lost == 0 {
		t.Fatalf("the network lost nothing: %+v", s)
	}
}

// lossyPair starts a publisher a and a subscriber collecting events on sc
// in got, over a network that loses 5 % of datagrams and duplicates and
// reorders some, with a keeping few acknowledged datagrams: pooled buffers
// go back and are reused while repairs still flow.
func lossyPair(t *testing.T, seed uint64, sc string) (net *faultnet.Network, a *Node, got *collector) {
	t.Helper()
	f := faultnet.Faults{Loss: 0.05, Duplicate: 0.02, Reorder: 0.05, ReorderDelay: time.Millisecond}
	net, nodes := startFaultNodes(t, 2, faultnet.Config{Seed: seed, MaxDatagram: 9000, Faults: f},
		func(_ int, c *Config) {
			c.QoS, c.ExplicitQoS = QoS{Reliable: true, Ordered: true}, true
			c.Streams.Receivers.Receiver.NackTries = patientNackTries
			c.Streams.Sender.RetainAcked = 4
		})
	a, got = nodes[0], new(collector)
	t.Cleanup(nodes[1].Subscribe(scope.MustParse(sc), got.handle))
	testutil.WaitFor(t, 10*time.Second, "interest", func() bool { return a.interest().Wanted(groupID(sc)) })
	return net, a, got
}

// checkIntact waits for n events in got and fails unless event i, in
// order, carries data(i) (whose first four bytes are i).
func checkIntact(t *testing.T, got *collector, n int, data func(int) []byte) {
	t.Helper()
	testutil.WaitFor(t, 60*time.Second, "every event", func() bool { return got.len() >= n })
	for i := 0; i < got.len(); i++ {
		d := got.get(i).Data
		if k := int(binary.BigEndian.Uint32(d)); k != i || !bytes.Equal(d, data(k)) {
			t.Fatalf("event %d: got %d bytes of event %d, damaged or out of order", i, len(d), k)
		}
	}
	if got.len() != n {
		t.Fatalf("%d events, want %d", got.len(), n)
	}
}

// recycleData is the payload of event i: 40 to 300 KB (pooled sizes),
// starting with i, every byte depending on i.
func recycleData(i int) []byte {
	d := make([]byte, 40_000+(i*37_000)%260_000)
	binary.BigEndian.PutUint32(d, uint32(i))
	for k := 4; k < len(d); k++ {
		d[k] = byte(k*7 + i)
	}
	return d
}
