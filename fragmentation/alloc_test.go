package fragmentation

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// TestAllocProvidesBuffers: with Config.Alloc the Assembler reassembles
// into the buffers it hands out, whatever they held, and a completed
// event's Data keeps its buffer's capacity; a buffer of the wrong size is
// not used.
func TestAllocProvidesBuffers(t *testing.T) {
	for _, wrong := range []bool{false, true} {
		var handed [][]byte
		cfg := DefaultConfig()
		cfg.Alloc = func(c int) []byte {
			b := bytes.Repeat([]byte{0xee}, c+1)[:0:c] // stale contents
			if wrong {
				b = b[: 0 : c-1]
			}
			handed = append(handed, b)
			return b
		}
		a := mustAssembler(t, cfg)
		data := payload(3, 30000)
		frags := mustAppendSplit(t, minimalEvent(1, 1, data), 1400)
		var got []byte
		for _, n := range feed(t, a, t0, frags, identity(len(frags))) {
			got = n.Data
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("wrong=%v: reassembled data differs", wrong)
		}
		if len(handed) == 0 {
			t.Fatal("Alloc was not used")
		}
		last := handed[len(handed)-1]
		used := cap(got) == cap(last) && &got[:1][0] == &last[:1][0]
		if used == wrong {
			t.Fatalf("wrong=%v: the event's buffer is Alloc's: %v", wrong, used)
		}
	}
}

// TestAllocGrowth: when a sender's chunks are uneven, so that the buffer
// sized from the first one is too small, the Assembler grows into another
// buffer from Alloc and carries over what it already holds.
func TestAllocGrowth(t *testing.T) {
	cfg := DefaultConfig()
	allocs := 0
	cfg.Alloc = func(c int) []byte {
		allocs++
		return bytes.Repeat([]byte{0xee}, c)[:0] // stale contents
	}
	a := mustAssembler(t, cfg)
	data := payload(9, 5000)
	parts := [][]byte{data[:100], data[100:2600], data[2600:]}
	var got *rsbpb.Notification
	for i, part := range parts {
		n := &rsbpb.Notification{EventId: eventID(1, 1), Data: part}
		if i == 0 {
			n.Scope = []byte("/a/")
		}
		fn := &rsbpb.FragmentedNotification{Notification: n, NumDataParts: proto.Uint32(3), DataPart: proto.Uint32(uint32(i))}
		out, err := a.AddBytes(t0, mustMarshal(t, fn))
		if err != nil {
			t.Fatal(err)
		}
		if out != nil {
			got = out
		}
	}
	if got == nil || !bytes.Equal(got.Data, data) {
		t.Fatal("reassembled data differs")
	}
	if allocs < 2 {
		t.Fatalf("%d buffers from Alloc: the buffer never grew", allocs)
	}
}
