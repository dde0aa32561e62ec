package node

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/faultnet"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// TestSocketEventsSplitInPieces: events a socket client publishes that
// must be split go out as fragments in pieces that alias the frame body
// (splitPieces); mixed with small events on one reliable ordered stream,
// over a network that loses and duplicates datagrams, every event arrives
// at a peer whole, byte for byte and in order, repairs included.
func TestSocketEventsSplitInPieces(t *testing.T) {
	net, nodes := startFaultNodes(t, 2, faultnet.Config{Seed: 11, MaxDatagram: DefaultLANDatagram,
		Faults: faultnet.Faults{Loss: 0.05, Duplicate: 0.02}}, func(_ int, c *Config) {
		c.QoS, c.ExplicitQoS = QoS{Reliable: true, Ordered: true}, true
		c.Streams.Receivers.Receiver.NackTries = patientNackTries
	})
	a, b := nodes[0], nodes[1]
	var got collector
	defer b.Subscribe(scope.MustParse("/pieces/"), got.handle)()
	testutil.WaitFor(t, 10*time.Second, "interest", func() bool { return a.interest().Wanted(groupID("/pieces/")) })
	pub := dialSocket(t, a)
	sizes := []int{100, 20 << 10, 3000, 1400, 64 << 10, 50, 1 << 20, 10, 5000, 200 << 10}
	var want [][]byte
	for round := 0; round < 3; round++ {
		var bodies [][]byte
		for _, size := range sizes {
			seq := uint32(len(want))
			data := make([]byte, size)
			for i := range data {
				data[i] = byte(i*7 + int(seq))
			}
			binary.BigEndian.PutUint32(data, seq)
			ev := testutil.Event("/pieces/x/", seq, data)
			ev.ID.SenderID = [16]byte{9}
			body, err := notification.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			bodies, want = append(bodies, body), append(want, data)
		}
		if err := pub.SendMany(bodies); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 30*time.Second, "every event", func() bool { return got.len() >= len(want) })
	if got.len() != len(want) {
		t.Fatalf("%d events, want %d", got.len(), len(want))
	}
	for i, w := range want {
		if d := got.get(i).Data; !bytes.Equal(d, w) {
			t.Fatalf("event %d: %d bytes, want %d (equal: %v)", i, len(d), len(w), bytes.Equal(d, w))
		}
	}
	if s := net.Stats(); s.Lost == 0 {
		t.Fatalf("the network lost nothing: %+v", s)
	}
}
