package rsbsocket

import (
	"bytes"
	"testing"

	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
)

// TestClientSendMany: the frames a client writes with SendMany, small and
// large coalesced into few writes, reach another client through the server
// intact and in order.
func TestClientSendMany(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	pub, sub := socktest.Dial(t, addr), socktest.Dial(t, addr)
	connOf(t, s, pub)
	connOf(t, s, sub)
	var bodies [][]byte
	for i, size := range []int{10, 70 << 10, 100, 20 << 10, 5} {
		bodies = append(bodies, socktest.Notification(t, "/many/", "bytes", bytes.Repeat([]byte{byte(i)}, size), uint32(i)))
	}
	for range 30 { // enough frames to need several writes
		bodies = append(bodies, socktest.PythonFrame)
	}
	if err := pub.SendMany(bodies); err != nil {
		t.Fatal(err)
	}
	for i, want := range bodies {
		if got := socktest.Recv(t, sub); !bytes.Equal(got, want) {
			t.Fatalf("frame %d differs", i)
		}
	}
}

// TestClientRecvInto: frames that fit the buffer passed in are read into
// it; a larger one gets new memory, which the next call may reuse.
func TestClientRecvInto(t *testing.T) {
	s, addr := startServer(t, quietConfig(), nil)
	pub, sub := socktest.Dial(t, addr), socktest.Dial(t, addr)
	connOf(t, s, pub)
	connOf(t, s, sub)
	var bodies [][]byte
	for i, size := range []int{100, frame.EagerAllocMax + 10, 50, frame.EagerAllocMax + 5, 3 * frame.EagerAllocMax} {
		bodies = append(bodies, socktest.Notification(t, "/into/", "bytes", bytes.Repeat([]byte{byte(i)}, size), uint32(i)))
	}
	go func() { _ = pub.SendMany(bodies) }()
	buf := make([]byte, 0, 1000)
	for i, want := range bodies {
		prev := buf
		got, err := sub.RecvInto(buf)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("frame %d differs", i)
		}
		reused := len(got) <= cap(prev) && &got[:cap(got)][cap(got)-1] == &prev[:cap(prev)][cap(prev)-1]
		if fits := len(want) <= cap(prev); fits != reused {
			t.Fatalf("frame %d of %d bytes, buffer of %d: reused %v", i, len(want), cap(prev), reused)
		}
		buf = got
	}
}
