package fragmentation

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// Buf is a pooled buffer that records of embedded publishers lie in:
// the fragments of one large event (splitParts), or the records of many
// small ones (a record slab, RecordSlabs). refs counts its holds: one for
// each publish on its way to the engine (pubReq.owner), which the engine
// turns into one for each of its records queued or retained on a sender
// stream (settleHolds), and for a slab a large bias while publishers
// carve from it (RecordSlabs). Whoever drops the last hold returns it to
// the pool. A hold that is never dropped (a publish that did not reach the
// engine, a record that socket clients' queues share) leaves the buffer
// to the garbage collector, never to reuse.
type Buf struct {
	b    []byte
	refs atomic.Int32
}

// Holds returns the holds on fb.
func (fb *Buf) Holds() int32 { return fb.refs.Load() }

// Hold adds n holds on fb, for n more owners that each drop one.
func (fb *Buf) Hold(n int32) { fb.refs.Add(n) }

// Drop drops n holds on fb and reports whether they were the last: fb is
// then back in the pool and must not be touched.
func (fb *Buf) Drop(n int32) bool {
	if fb.refs.Add(-n) != 0 {
		return false
	}
	bufPool.put(fb)
	return true
}

// bufPoolT recycles fragment buffers once no sender stream holds their
// records, so that a stream of large events writes into memory it has
// written before: memory fresh from the kernel costs a page fault per
// 4 KiB on its first write, more than the copy itself. Buffers are kept
// in size classes an eighth of an octave apart, in sync.Pools, which let
// them go when the garbage collector finds them unused for two cycles.
type bufPoolT struct {
	classes [bufClasses]sync.Pool
}

// bufClassesPerOctave is the number of size classes per doubling: a
// buffer is at most 1/8 larger than asked.
const bufClassesPerOctave = 8

// bufClasses is the number of size classes, covering the sizes above
// 1<<minBufPoolShift up to 1<<maxBufPoolShift.
const bufClasses = (maxBufPoolShift - minBufPoolShift) * bufClassesPerOctave

// bufClass returns the class of a buffer of n bytes and its size, or -1
// when n is outside the pooled sizes.
func bufClass(n int) (class, size int) {
	if n <= 1<<minBufPoolShift || n > 1<<maxBufPoolShift {
		return -1, n
	}
	k := bits.Len(uint(n-1)) - 1 // 1<<k < n <= 1<<(k+1)
	step := 1 << (k - 3)
	j := (n - 1<<k + step - 1) / step // 1..8
	return (k-minBufPoolShift)*bufClassesPerOctave + j - 1, 1<<k + j*step
}

// get returns a buffer of n bytes (its contents undefined) with one hold,
// the caller's.
func (p *bufPoolT) get(n int) *Buf {
	c, size := bufClass(n)
	if c >= 0 {
		if fb, ok := p.classes[c].Get().(*Buf); ok {
			fb.b = fb.b[:n]
			fb.refs.Store(1)
			return fb
		}
	}
	fb := &Buf{b: make([]byte, n, size)}
	fb.refs.Store(1)
	return fb
}

// put returns fb, which has no hold left, to its class; a buffer outside
// the pooled sizes is left to the garbage collector.
func (p *bufPoolT) put(fb *Buf) {
	if c, _ := bufClass(cap(fb.b)); c >= 0 {
		p.classes[c].Put(fb)
	}
}

// bufPool is the process's pool: publishers of every node take from it,
// engines return to it.
var bufPool bufPoolT
