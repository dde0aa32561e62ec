package node

import "testing"

// TestReasmPool: get hands back a pooled buffer of exactly the capacity
// asked for, else a new one; put keeps at most reasmPoolBytes, dropping
// the oldest buffers first.
func TestReasmPool(t *testing.T) {
	var p reasmPool
	a := make([]byte, 10, 100)
	p.put(a)
	if b := p.get(99); cap(b) != 99 || len(b) != 0 {
		t.Fatalf("get(99) = len %d cap %d", len(b), cap(b))
	}
	b := p.get(100)
	if cap(b) != 100 || len(b) != 0 || &b[:1][0] != &a[0] {
		t.Fatal("the pooled buffer of capacity 100 was not reused")
	}
	if c := p.get(100); &c[:1][0] == &a[0] {
		t.Fatal("a buffer was handed out twice")
	}
	big := reasmPoolBytes / 4
	for range 6 {
		p.put(make([]byte, 0, big))
	}
	if p.bytes > reasmPoolBytes || len(p.free) != 4 {
		t.Fatalf("pool holds %d bytes in %d buffers, bound %d", p.bytes, len(p.free), reasmPoolBytes)
	}
	for range reasmPoolBuffers + 10 {
		p.put(make([]byte, 0, 10))
	}
	if len(p.free) != reasmPoolBuffers {
		t.Fatalf("pool holds %d buffers, bound %d", len(p.free), reasmPoolBuffers)
	}
	p.put(make([]byte, 0, reasmPoolBytes+1)) // too large to keep
	if len(p.free) != reasmPoolBuffers {
		t.Fatal("an oversized buffer was kept")
	}
}
