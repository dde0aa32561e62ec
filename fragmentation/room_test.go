package fragmentation

import (
	"bytes"
	"errors"
	"testing"
)

// TestRoomAroundData: with Config.Room, an event reassembled from several
// fragments lies in a buffer with the room around its data, with Alloc
// and without, in order and out of order (a stashed fragment, a grown
// buffer); TakeRoom hands the buffer out once. Unfragmented events and
// Adds that complete nothing have none.
func TestRoomAroundData(t *testing.T) {
	rm := Room{Head: 16, Tail: 8}
	for _, withAlloc := range []bool{false, true} {
		for _, order := range [][]int{nil, {1, 0, 3, 2}} {
			cfg := DefaultConfig()
			cfg.Room = rm
			var asked []int
			if withAlloc {
				cfg.Alloc = func(c int) []byte {
					asked = append(asked, c)
					return make([]byte, 0, c)
				}
			}
			a := mustAssembler(t, cfg)
			data := payload(4, 5000)
			frags := mustAppendSplit(t, minimalEvent(1, 7, data), 1400)
			if order == nil {
				order = identity(len(frags))
			}
			if len(frags) != len(order) {
				t.Fatalf("%d fragments, want %d", len(frags), len(order))
			}
			var got []byte
			for i, k := range order {
				n, err := a.AddBytes(t0, frags[k])
				if err != nil {
					t.Fatal(err)
				}
				buf := a.TakeRoom()
				if i < len(order)-1 {
					if n != nil || buf != nil {
						t.Fatalf("fragment %d of %d completed an event (room %d bytes)", i, len(order), len(buf))
					}
					continue
				}
				if n == nil || !bytes.Equal(n.Data, data) {
					t.Fatal("event not reassembled")
				}
				got = buf
				if len(buf) < rm.Head+len(data)+rm.Tail || &buf[rm.Head] != &n.Data[0] {
					t.Fatalf("alloc=%v order=%v: room of %d bytes does not hold the data at %d", withAlloc, order, len(buf), rm.Head)
				}
			}
			if a.TakeRoom() != nil {
				t.Fatal("TakeRoom handed the buffer out twice")
			}
			if withAlloc && (len(asked) == 0 || asked[len(asked)-1] != len(got)) {
				t.Fatalf("Alloc asked for %v, the room is %d bytes", asked, len(got))
			}
		}
	}
	cfg := DefaultConfig()
	cfg.Room = rm
	a := mustAssembler(t, cfg)
	whole := mustAppendSplit(t, minimalEvent(1, 8, payload(5, 100)), 1400)
	if len(whole) != 1 {
		t.Fatalf("%d fragments", len(whole))
	}
	if n, err := a.AddBytes(t0, whole[0]); err != nil || n == nil || a.TakeRoom() != nil {
		t.Fatalf("unfragmented event: %v, %v, or it had room", n, err)
	}
	for _, bad := range []Room{{Head: -1}, {Tail: MaxRoom + 1}} {
		c := DefaultConfig()
		c.Room = bad
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("Room %+v: %v", bad, err)
		}
	}
}
