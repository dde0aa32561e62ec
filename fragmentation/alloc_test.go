package fragmentation

import (
	"bytes"
	"testing"
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
