package sinks

import "bytes"

// BodySlabs copies received event bodies out of a reader's buffer (which
// the next read overwrites) into shared slabs, so that a batch of small
// events costs one allocation per slab instead of one per event. The events
// decoded from the copies alias them, and a Handler may retain an event: a
// retained event keeps its whole slab alive. Each body therefore goes to a
// slab of a size class chosen for it, at least bodySlabEvents and fewer than
// twice as many times its size, so that a retained event pins less than
// 2*bodySlabEvents times its own size. Bodies under minSlabBody (whose
// allocations are cheap, while a slab is zeroed before the copy) and over
// MaxSlabBody are copied alone. The zero value is ready; it is not safe
// for concurrent use.
type BodySlabs struct {
	cur [bodySlabClasses][]byte
}

// clone returns a copy of b whose capacity ends with it (an append to it
// reallocates rather than write into a neighbour).
func (s *BodySlabs) Clone(b []byte) []byte {
	n := len(b)
	if n < minSlabBody || n > MaxSlabBody {
		c := bytes.Clone(b)
		return c[:n:n]
	}
	c := bodySlabClass(n)
	buf := s.cur[c]
	if cap(buf)-len(buf) < n {
		buf = make([]byte, 0, bodySlabEvents*minSlabBody<<c)
	}
	start := len(buf)
	buf = append(buf, b...)
	s.cur[c] = buf
	return buf[start:len(buf):len(buf)]
}

// bodySlabClass returns the class of a body of n bytes (minSlabBody to
// MaxSlabBody): the smallest slab that holds bodySlabEvents of them.
func bodySlabClass(n int) int {
	c := 0
	for c < bodySlabClasses-1 && minSlabBody<<c < n {
		c++
	}
	return c
}
