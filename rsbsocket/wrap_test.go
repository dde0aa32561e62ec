package rsbsocket

import (
	"bytes"
	"sync"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
)

// wrapper is a Handler that wraps every frame it gets in place, as a node
// wraps the frames it sends to the network, and keeps the results.
type wrapper struct {
	mu      sync.Mutex
	wrapped [][]byte
	refused int
}

func (w *wrapper) OnFrame(_ ConnID, f frame.Frame) {
	rec, ok := f.Wrap([]byte("<<"), []byte(">>>"))
	w.mu.Lock()
	defer w.mu.Unlock()
	if ok {
		w.wrapped = append(w.wrapped, rec)
	} else {
		w.refused++
	}
}

func (w *wrapper) snapshot() ([][]byte, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([][]byte(nil), w.wrapped...), w.refused
}

// TestFrameWrapInPlace: with FrameRoom, the Handler wraps each frame
// around its body without a copy, while the connections the frame was
// relayed to still receive the body byte for byte; a frame above 1 MiB
// (read in steps) has no room and is refused, as is a wrap larger than
// the room.
func TestFrameWrapInPlace(t *testing.T) {
	cfg := quietConfig()
	cfg.FrameRoom = frame.Room{Head: 2, Tail: 3}
	w := &wrapper{}
	s, addr := startServer(t, cfg, w)
	pub, sub := socktest.Dial(t, addr), socktest.Dial(t, addr)
	connOf(t, s, pub)
	connOf(t, s, sub)
	small := socktest.Notification(t, "/wrap/", "bytes", bytes.Repeat([]byte{'s'}, 100), 1)
	large := socktest.Notification(t, "/wrap/", "bytes", bytes.Repeat([]byte{'l'}, frame.EagerAllocMax+1), 2)
	for _, body := range [][]byte{small, large} {
		socktest.Send(t, pub, body)
		if got := socktest.Recv(t, sub); !bytes.Equal(got, body) {
			t.Fatalf("relayed frame of %d bytes changed", len(body))
		}
	}
	testutil.WaitFor(t, socktest.Timeout, "both frames handled", func() bool { got, refused := w.snapshot(); return len(got)+refused == 2 })
	got, refused := w.snapshot()
	want := append(append([]byte("<<"), small...), ">>>"...)
	if len(got) != 1 || refused != 1 || !bytes.Equal(got[0], want) {
		t.Fatalf("wrapped %d frames (first %d bytes), refused %d; want the small one wrapped, the large one refused",
			len(got), len(got[0]), refused)
	}
	if cap(got[0]) != len(got[0]) {
		t.Fatalf("wrapped record has capacity %d past its %d bytes", cap(got[0]), len(got[0]))
	}
}
