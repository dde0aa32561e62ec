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
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// lossyCase is one network and class for TestTwoSendersOverALossyNetwork.
type lossyCase struct {
	ordered bool
	dgram   int
	burst   bool
}

// TestTwoSendersOverALossyNetwork: two nodes publish at once to a third,
// one from an embedded publisher, one from a socket client, events from 10
// bytes to 1 MiB, over a network that loses (at random and in bursts),
// duplicates and reorders datagrams. Every event arrives exactly once, byte
// for byte, and on ordered streams in its sender's order.
func TestTwoSendersOverALossyNetwork(t *testing.T) {
	for _, c := range []lossyCase{
		{ordered: true, dgram: DefaultLANDatagram},
		{ordered: false, dgram: DefaultLANDatagram, burst: true},
		{ordered: true, dgram: DefaultLoopbackDatagram, burst: true},
		{ordered: false, dgram: 9000},
	} {
		t.Run(fmt.Sprintf("ordered=%v,datagram=%d,burst=%v", c.ordered, c.dgram, c.burst), func(t *testing.T) {
			twoSendersOverALossyNetwork(t, c)
		})
	}
}

// lossyEventSizes are the event sizes the senders cycle through; two events
// in three are cut to 200 bytes, so small events dominate.
var lossyEventSizes = []int{100, 20 << 10, 3000, 1400, 64 << 10, 50, 1 << 20, 10, 5000, 200 << 10}

// lossyData is the payload of event i of sender src: both numbers, then
// bytes that depend on them.
func lossyData(src, i int) []byte {
	d := make([]byte, lossyEventSizes[i%len(lossyEventSizes)]+8)
	if i%3 != 0 {
		d = d[:min(len(d), 208)]
	}
	binary.BigEndian.PutUint32(d, uint32(src))
	binary.BigEndian.PutUint32(d[4:], uint32(i))
	for k := 8; k < len(d); k++ {
		d[k] = byte(k + i + src)
	}
	return d
}

func twoSendersOverALossyNetwork(t *testing.T, c lossyCase) {
	const perSender = 300
	f := faultnet.Faults{Loss: 0.05, Duplicate: 0.02, Reorder: 0.05, ReorderDelay: time.Millisecond}
	if c.burst {
		f.Burst = faultnet.Burst{Enter: 0.005, Exit: 0.3}
	}
	net, nodes := startFaultNodes(t, 3, faultnet.Config{Seed: 13, MaxDatagram: c.dgram, Faults: f},
		func(_ int, cf *Config) {
			cf.QoS, cf.ExplicitQoS = QoS{Reliable: true, Ordered: c.ordered}, true
			cf.Streams.Receivers.Receiver.NackTries = patientNackTries
		})
	a, b, r := nodes[0], nodes[1], nodes[2]
	var got collector
	defer r.Subscribe(scope.MustParse("/lossy/"), got.handle)()
	testutil.WaitFor(t, 10*time.Second, "interest", func() bool {
		return a.interest().Wanted(groupID("/lossy/")) && b.interest().Wanted(groupID("/lossy/"))
	})
	pub := dialSocket(t, b)
	if err := pub.Send(helloBody(t, 0, "/elsewhere/")); err != nil { // a listener elsewhere: it wants nothing of this
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < perSender; i++ {
			if err := a.Publish(context.Background(), testutil.Event("/lossy/a/", uint32(i), lossyData(0, i))); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < perSender; i++ {
			ev := testutil.Event("/lossy/b/", uint32(i), lossyData(1, i))
			ev.ID.SenderID = [16]byte{5}
			body, err := notification.Marshal(ev)
			if err == nil {
				err = pub.Send(body)
			}
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	testutil.WaitFor(t, 120*time.Second, "every event", func() bool { return got.len() >= 2*perSender })
	last := [2]int{-1, -1}
	seen := map[[2]int]bool{}
	for i := 0; i < got.len(); i++ {
		d := got.get(i).Data
		src, k := int(binary.BigEndian.Uint32(d)), int(binary.BigEndian.Uint32(d[4:]))
		switch {
		case src > 1 || !bytes.Equal(d, lossyData(src, k)):
			t.Fatalf("event %d of sender %d damaged (%d bytes)", k, src, len(d))
		case seen[[2]int{src, k}]:
			t.Fatalf("event %d of sender %d delivered twice", k, src)
		case c.ordered && k <= last[src]:
			t.Fatalf("event %d of sender %d after %d", k, src, last[src])
		}
		seen[[2]int{src, k}], last[src] = true, k
	}
	if got.len() != 2*perSender {
		t.Fatalf("%d events, want %d", got.len(), 2*perSender)
	}
	if s := net.Stats(); s.Lost == 0 || s.Duplicated == 0 || s.Reordered == 0 {
		t.Fatalf("the network did not misbehave: %+v", s)
	}
}
