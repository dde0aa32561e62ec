package node

import (
	"slices"
	"sync"
)

// reasmPool keeps the data buffers of reassembled events that reached
// borrowing subscriptions only (WithoutRetention), so that the assemblers
// reuse them instead of allocating (and the runtime clearing) a buffer per
// event. The assemblers ask for an exact capacity; a stream of events of
// one size thus finds its buffers again. The pool is bounded by
// reasmPoolBytes and reasmPoolBuffers, the oldest buffers going first.
type reasmPool struct {
	mu    sync.Mutex
	free  [][]byte
	bytes int
}

// get returns a buffer of length 0 and capacity exactly c: a pooled one,
// whatever it holds, or a new one. It is the assemblers' Alloc.
func (p *reasmPool) get(c int) []byte {
	p.mu.Lock()
	for i := len(p.free) - 1; i >= 0; i-- {
		if b := p.free[i]; cap(b) == c {
			p.free = slices.Delete(p.free, i, i+1)
			p.bytes -= c
			p.mu.Unlock()
			return b
		}
	}
	p.mu.Unlock()
	return make([]byte, 0, c)
}

// put gives back a buffer nothing uses any more.
func (p *reasmPool) put(b []byte) {
	c := cap(b)
	if c == 0 || c > reasmPoolBytes {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.free) > 0 && (p.bytes+c > reasmPoolBytes || len(p.free) >= reasmPoolBuffers) {
		p.bytes -= cap(p.free[0])
		p.free[0] = nil
		p.free = p.free[1:]
	}
	p.free = append(p.free, b[:0])
	p.bytes += c
}
