package fragmentation

import "testing"

// TestReasmPool: get hands back a pooled buffer of exactly the capacity
// asked for, else a new one; put keeps at most ReassemblyPoolBytes, dropping
// the oldest buffers first.
func TestReasmPool(t *testing.T) {
	var p ReassemblyPool
	a := make([]byte, 10, 100)
	p.Put(a)
	if b := p.Get(99); cap(b) != 99 || len(b) != 0 {
		t.Fatalf("get(99) = len %d cap %d", len(b), cap(b))
	}
	b := p.Get(100)
	if cap(b) != 100 || len(b) != 0 || &b[:1][0] != &a[0] {
		t.Fatal("the pooled buffer of capacity 100 was not reused")
	}
	if c := p.Get(100); &c[:1][0] == &a[0] {
		t.Fatal("a buffer was handed out twice")
	}
	big := ReassemblyPoolBytes / 4
	for range 6 {
		p.Put(make([]byte, 0, big))
	}
	if p.bytes > ReassemblyPoolBytes || len(p.free) != 4 {
		t.Fatalf("pool holds %d bytes in %d buffers, bound %d", p.bytes, len(p.free), ReassemblyPoolBytes)
	}
	for range ReassemblyPoolBuffers + 10 {
		p.Put(make([]byte, 0, 10))
	}
	if len(p.free) != ReassemblyPoolBuffers {
		t.Fatalf("pool holds %d buffers, bound %d", len(p.free), ReassemblyPoolBuffers)
	}
	p.Put(make([]byte, 0, ReassemblyPoolBytes+1)) // too large to keep
	if len(p.free) != ReassemblyPoolBuffers {
		t.Fatal("an oversized buffer was kept")
	}
}
