package rsbsocket

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
)

// TestLargeFramesPastTheEagerBudget: clients that all stall in the middle
// of a large frame at once take the server's eager budget and no more (the
// readers past it grow their bodies instead); once they send the rest,
// every frame arrives intact and the budget is whole again.
func TestLargeFramesPastTheEagerBudget(t *testing.T) {
	const clients = 20
	rec := &recorder{}
	s, addr := startServer(t, quietConfig(), rec)
	bodies := make([][]byte, clients)
	conns := make([]net.Conn, clients)
	for i := range clients {
		bodies[i] = socktest.Notification(t, "/big/", "bytes", bytes.Repeat([]byte{byte(i)}, 4<<20), uint32(i))
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_ = c.SetDeadline(time.Now().Add(socktest.Timeout))
		if err := frame.ReadHandshake(c); err != nil {
			t.Fatal(err)
		}
		wire := frame.AppendFrame(nil, bodies[i])
		if _, err := c.Write(wire[:len(wire)/2]); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	n := int64(len(bodies[0]))
	want := frame.EagerBudget / n * n // as many whole bodies as fit
	grown := clients - uint64(want/n)
	// Every reader has taken its decision before the rest is sent: one
	// that read its header only after another frame completed would find
	// budget again.
	testutil.WaitFor(t, socktest.Timeout, "the budget taken and the rest refused", func() bool {
		return s.large.InUse() == want && s.Stats().LargeGrown == grown
	})
	for i, c := range conns {
		wire := frame.AppendFrame(nil, bodies[i])
		if _, err := c.Write(wire[len(wire)/2:]); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, socktest.Timeout, "every frame handled", func() bool { return len(rec.snapshot()) == clients })
	for _, r := range rec.snapshot() {
		seq := r.f.SequenceNumber
		if seq >= clients || !bytes.Equal(r.f.Body, bodies[seq]) {
			t.Fatalf("frame %d differs", seq)
		}
	}
	if v := s.large.InUse(); v != 0 {
		t.Fatalf("budget holds %d bytes once every frame is read", v)
	}
	if g := s.Stats().LargeGrown; g != grown {
		t.Fatalf("%d bodies counted as grown, want %d", g, grown)
	}
}
