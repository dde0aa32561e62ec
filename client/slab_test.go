package client

import (
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
)

func TestLargeClass(t *testing.T) {
	for _, c := range []struct {
		n, class int
		ok       bool
	}{
		{recvSlabBytes, 0, false}, // a small slab's
		{recvSlabBytes + 1, 0, true},
		{20 << 10, 0, true},
		{20<<10 + 1, 1, true},
		{32 << 10, 3, true},
		{32<<10 + 1, 4, true},
		{1 << 20, 23, true},
		{1<<20 + 100, 24, true},
		{recvLargeMax, recvLargeClasses - 1, true},
		{recvLargeMax + 1, 0, false}, // memory of its own
	} {
		class, ok := largeClass(c.n)
		if class != c.class || ok != c.ok {
			t.Errorf("largeClass(%d) = %d, %v; want %d, %v", c.n, class, ok, c.class, c.ok)
		}
		if ok && (largeClassBytes(class) < c.n || largeClassBytes(class) > c.n*5/4+1) {
			t.Errorf("class %d holds %d bytes for a body of %d", class, largeClassBytes(class), c.n)
		}
	}
}

// TestLargeClassFits: every large body's class holds it, and the class
// below does not.
func TestLargeClassFits(t *testing.T) {
	for n := recvSlabBytes + 1; n <= recvLargeMax; n += 509 {
		for _, m := range []int{n, n - n%4096, n - n%4096 + 1} {
			c, ok := largeClass(m)
			if m <= recvSlabBytes {
				continue
			}
			if !ok || largeClassBytes(c) < m || c > 0 && largeClassBytes(c-1) >= m {
				t.Fatalf("largeClass(%d) = %d (%d bytes; the class below %d), %v", m, c, largeClassBytes(c), largeClassBytes(max(c-1, 0)), ok)
			}
		}
	}
}

// TestSlabPoolBounds: a slab given back is reused; the pool keeps at most
// recvSlabPool slabs and recvLargePoolBytes of large ones, and a slab with
// a kept event is not given back.
func TestSlabPoolBounds(t *testing.T) {
	p := newSlabPool()
	s := p.get()
	s.release() // an event lent out and given back while the reader reads on
	s.leave(2)  // the reader lent two
	if got := p.get(); got == s {
		t.Fatal("a slab with an event out was reused")
	}
	s.release() // the second event given back
	if got := p.get(); got != s || got.refs.Load() != readerRefs {
		t.Fatal("a slab given back was not reused")
	}
	s.kept.Store(true)
	s.leave(0)
	if got := p.get(); got == s {
		t.Fatal("a slab with a kept event was reused")
	}

	var larges []*recvSlab
	for range 2 * recvLargePoolBytes / (1 << 20) {
		larges = append(larges, p.getLarge(1<<20)) // class of 1 MiB
	}
	for _, l := range larges {
		l.leave(0)
	}
	if got := p.large.bytes.Load(); got != recvLargePoolBytes {
		t.Fatalf("the pool holds %d bytes of large slabs, want its bound %d", got, recvLargePoolBytes)
	}
	made := p.made.Load()
	for range recvLargePoolBytes / (1 << 20) {
		p.getLarge(1 << 20)
	}
	if p.made.Load() != made || p.large.bytes.Load() != 0 {
		t.Fatalf("pooled large slabs not reused: %d made, %d bytes left", p.made.Load()-made, p.large.bytes.Load())
	}

	for range 2 * recvSlabPool {
		p.get().leave(0)
	}
	var small []*recvSlab
	for range 2 * recvSlabPool {
		small = append(small, p.get())
	}
	for _, s := range small {
		s.leave(0)
	}
	if len(p.free) != recvSlabPool {
		t.Fatalf("the pool keeps %d slabs, want %d", len(p.free), recvSlabPool)
	}
}

// TestPoolsEmptyWhenIdle: a pool nobody takes from for its idle period
// drops what it holds; one in use keeps it.
func TestPoolsEmptyWhenIdle(t *testing.T) {
	const idle = 300 * time.Millisecond
	p := newSlabPool()
	p.trim.idle = idle
	b := newBufPool(sendBufPoolBytes)
	b.trim.idle = idle
	buf, _ := b.get(100 << 10)
	b.put(buf)
	p.get().leave(0)
	p.getLarge(100 << 10).leave(0)
	if len(p.free) != 1 || p.large.bytes.Load() == 0 || b.lists.bytes.Load() == 0 {
		t.Fatal("nothing pooled")
	}
	// Taken from and given back again and again, for two periods: nothing
	// is made anew.
	made := p.made.Load()
	for deadline := time.Now().Add(2 * idle); time.Now().Before(deadline); {
		p.get().leave(0)
	}
	if p.made.Load() != made {
		t.Fatalf("%d slabs made while the pool was in use", p.made.Load()-made)
	}
	testutil.WaitFor(t, 10*time.Second, "the idle pools to empty", func() bool {
		return len(p.free) == 0 && p.large.bytes.Load() == 0 && b.lists.bytes.Load() == 0
	})
	// Used again, a pool keeps and trims as before.
	p.get().leave(0)
	if len(p.free) != 1 {
		t.Fatal("nothing pooled after the trim")
	}
	testutil.WaitFor(t, 10*time.Second, "the pool to empty again", func() bool { return len(p.free) == 0 })
}
