package node

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// slabData is the payload of small event i: 50 to 3 000 bytes, every byte
// depending on i.
func slabData(i int) []byte {
	d := make([]byte, 50+(i*131)%2950)
	for k := range d {
		d[k] = byte(k*13 + i*7)
	}
	binary.BigEndian.PutUint32(d, uint32(i))
	return d
}

// TestRecycledRecordsOverALossyNetwork: the records of small events are
// carved from slabs that go back to the pool once the sender streams let
// them go; over a network that loses, duplicates and reorders, with few
// acknowledged datagrams kept, every event still arrives once and intact
// (a slab reused while a stream held its records would repair with other
// events' bytes), and slabs were reused.
func TestRecycledRecordsOverALossyNetwork(t *testing.T) {
	net, a, got := lossyPair(t, 31, "/slabs/")
	const n = 3000
	for i := range n {
		if err := a.Publish(context.Background(), testutil.Event("/slabs/", uint32(i), slabData(i))); err != nil {
			t.Fatal(err)
		}
		if i%100 == 99 {
			// Let acknowledgements come back, so that slabs are
			// released while the publisher still carves.
			testutil.WaitFor(t, 60*time.Second, "a hundred more events", func() bool { return got.len() >= i+1 })
		}
	}
	checkIntact(t, got, n, slabData)
	recycled := a.eng.Buffers().Recycled
	if recycled == 0 {
		t.Fatal("no record slab went back to the pool")
	}
	if s := net.Stats(); s.Lost == 0 {
		t.Fatalf("the network lost nothing: %+v", s)
	}
	t.Logf("%d slabs recycled for %d events", recycled, n)
}

// TestSocketSharedRecordsNotRecycled: the record of an event that a local
// socket client also wants is shared with that client's queue, so its
// slab is never reused: after a peer acknowledged every event (and the
// streams let the records go) no buffer went back to the pool, and the
// client reads every frame intact.
func TestSocketSharedRecordsNotRecycled(t *testing.T) {
	nodes := startNodes(t, 2, func(_ int, c *Config) { c.Streams.Sender.RetainAcked = 1 })
	a, b := nodes[0], nodes[1]
	var got collector
	defer b.Subscribe(scope.MustParse("/shared/"), got.handle)()
	sub := dialSocket(t, a)
	if err := sub.Send(helloBody(t, 0, "/shared/")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "interest", func() bool {
		return a.interest().Wanted(groupID("/shared/")) && a.SocketInterest().Matches(scope.MustParse("/shared/"))
	})
	const n = 600 // about 900 KB: a dozen slabs
	for i := range n {
		if err := a.Publish(context.Background(), testutil.Event("/shared/", uint32(i), slabData(i))); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 30*time.Second, "every event at the peer", func() bool { return got.len() >= n })
	testutil.WaitFor(t, 30*time.Second, "every datagram acknowledged", func() bool { return retainedDatagrams(a) <= 2 })
	recycled := a.eng.Buffers().Recycled
	if recycled != 0 {
		t.Fatalf("%d buffers shared with a socket client's queue went back to the pool", recycled)
	}
	if err := sub.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		body, err := sub.Recv()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		ev, err := notification.Unmarshal(body)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(ev.Data, slabData(i)) {
			t.Fatalf("frame %d: %s", i, describeData(ev.Data))
		}
	}
}

// describeData says which event a damaged payload looks like.
func describeData(d []byte) string {
	if len(d) < 4 {
		return fmt.Sprintf("%d bytes", len(d))
	}
	return fmt.Sprintf("%d bytes starting as event %d", len(d), binary.BigEndian.Uint32(d))
}
