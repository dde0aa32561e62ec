package fragmentation

import (
	"bytes"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
)

// TestRecordSlabHolds: a slab's buffer goes back to the pool only when
// the last hold is dropped: each carved record's, and the slab's own,
// which it drops when it moves on to a new buffer.
func TestRecordSlabHolds(t *testing.T) {
	const n = 1000
	var s RecordSlabs
	_, first := s.carve(n)
	records := 1
	for {
		_, o := s.carve(n)
		if o != first {
			o.Drop(1) // a record of the next buffer
			break
		}
		records++
	}
	if records != RecordSlabSize/n {
		t.Fatalf("%d records of %d bytes in a slab of %d", records, n, RecordSlabSize)
	}
	if got := int(first.refs.Load()); got != records {
		t.Fatalf("full slab: %d holds, want %d (one per record, the slab's dropped)", got, records)
	}
	for i := range records {
		if last := first.Drop(1); last != (i == records-1) {
			t.Fatalf("hold %d of %d dropped: pooled %v", i+1, records, last)
		}
	}
	// Holds dropped while the slab still carves do not pool it.
	_, cur := s.carve(n)
	if cur.Drop(1) {
		t.Fatal("a slab still carving went back to the pool")
	}
	// A slab whose records were all let go goes back when it moves on,
	// and is counted. It holds two records already (the next buffer's
	// first, then cur's); the carve that moves on is the one after the
	// last record fits. (The pool may hand the same buffer out again, so
	// the count says when it moved on, not the buffer.)
	before := s.recycled.Load()
	carves := 0
	for s.recycled.Load() == before && carves <= records {
		_, o := s.carve(n)
		o.Drop(1)
		carves++
	}
	if got := s.recycled.Load() - before; got != 1 || carves != records-1 {
		t.Fatalf("%d buffers counted after %d carves, want 1 after %d", got, carves, records-1)
	}
}

// TestFragClass: a pooled buffer is at least the size asked and at most an
// eighth larger; classes grow with the size, stay in range, and a buffer
// of a class's size falls back into that class.
func TestFragClass(t *testing.T) {
	if c, size := bufClass(1 << minBufPoolShift); c != -1 || size != 1<<minBufPoolShift {
		t.Fatalf("32 KiB: class %d size %d, want unpooled", c, size)
	}
	if c, _ := bufClass(1<<maxBufPoolShift + 1); c != -1 {
		t.Fatalf("past the largest: class %d", c)
	}
	prev := -1
	for n := 1<<minBufPoolShift + 1; n <= 1<<maxBufPoolShift; n += 1 + n/97 {
		c, size := bufClass(n)
		if c < prev || c >= bufClasses || size < n || size-n > n/8 {
			t.Fatalf("%d bytes: class %d (after %d) of %d bytes", n, c, prev, size)
		}
		if c2, size2 := bufClass(size); c2 != c || size2 != size {
			t.Fatalf("%d bytes: class %d size %d, its size gives %d, %d", n, c, size, c2, size2)
		}
		prev = c
	}
	if c, _ := bufClass(1 << maxBufPoolShift); c != bufClasses-1 {
		t.Fatalf("largest pooled size: class %d of %d", c, bufClasses)
	}
}

// TestSplitIntoReusedBuffer: fragments cut into a buffer that held other
// bytes before are those of a fresh split (every byte is overwritten).
func TestSplitIntoReusedBuffer(t *testing.T) {
	capacity := 9000 - dataHeader - recordOverhead
	for i := range 16 {
		ev := testutil.Event("/reuse/", uint32(i), bytes.Repeat([]byte{byte(i), byte(3 * i)}, 50000))
		got, owner, err := SplitEvent(nil, ev, capacity)
		if err != nil {
			t.Fatal(err)
		}
		if owner == nil {
			t.Fatal("a 100 000-byte event's buffer is not pooled")
		}
		body, err := notification.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		want, err := splitRaw(nil, body, capacity)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("event %d: %d fragments, want %d", i, len(got), len(want))
		}
		for k := range got {
			if !bytes.Equal(got[k], want[k]) {
				t.Fatalf("event %d: fragment %d differs", i, k)
			}
		}
		for k := range owner.b {
			owner.b[k] = 0xa5 // what the next event must overwrite
		}
		if !owner.Drop(1) {
			t.Fatal("a split's only hold dropped, and its buffer was not pooled")
		}
	}
	small := testutil.Event("/reuse/", 99, make([]byte, 20_000))
	if _, owner, err := SplitEvent(nil, small, 1400-dataHeader-recordOverhead); err != nil || owner != nil {
		t.Fatalf("a 20 000-byte event: owner %v, err %v; want none (below the pooled sizes)", owner, err)
	}
}
