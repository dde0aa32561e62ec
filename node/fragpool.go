package node

import (
	"math/bits"
	"sync"

	"github.com/rsbd/rsbd/transport/datagram"
)

// fragBuf is the buffer the fragments of one large embedded event share
// (splitParts). refs counts the records of it queued or retained on
// sender streams; the engine owns it, under its mutex.
type fragBuf struct {
	b    []byte
	refs int
}

// fragPool recycles fragment buffers once no sender stream holds their
// records, so that a stream of large events writes into memory it has
// written before: memory fresh from the kernel costs a page fault per
// 4 KiB on its first write, more than the copy itself. Buffers are kept
// in size classes an eighth of an octave apart, in sync.Pools, which let
// them go when the garbage collector finds them unused for two cycles.
type fragPool struct {
	classes [fragClasses]sync.Pool
}

// fragClassesPerOctave is the number of size classes per doubling: a
// buffer is at most 1/8 larger than asked.
const fragClassesPerOctave = 8

// fragClasses is the number of size classes, covering the sizes above
// 1<<minFragPoolShift up to 1<<maxFragPoolShift.
const fragClasses = (maxFragPoolShift - minFragPoolShift) * fragClassesPerOctave

// fragClass returns the class of a buffer of n bytes and its size, or -1
// when n is outside the pooled sizes.
func fragClass(n int) (class, size int) {
	if n <= 1<<minFragPoolShift || n > 1<<maxFragPoolShift {
		return -1, n
	}
	k := bits.Len(uint(n-1)) - 1 // 1<<k < n <= 1<<(k+1)
	step := 1 << (k - 3)
	j := (n - 1<<k + step - 1) / step // 1..8
	return (k-minFragPoolShift)*fragClassesPerOctave + j - 1, 1<<k + j*step
}

// get returns a buffer of n bytes (its contents undefined) with no refs.
func (p *fragPool) get(n int) *fragBuf {
	c, size := fragClass(n)
	if c >= 0 {
		if fb, ok := p.classes[c].Get().(*fragBuf); ok {
			fb.b = fb.b[:n]
			return fb
		}
	}
	return &fragBuf{b: make([]byte, n, size)}
}

// put returns fb to its class; a buffer outside the pooled sizes is left
// to the garbage collector.
func (p *fragPool) put(fb *fragBuf) {
	if c, _ := fragClass(cap(fb.b)); c >= 0 {
		fb.refs = 0
		p.classes[c].Put(fb)
	}
}

// fragPools is the process's pool: publishers of every node take from it,
// engines return to it.
var fragPools fragPool

// fragOwners tracks which pooled buffers the records of sent DATA
// datagrams lie in, so that a buffer goes back to the pool when the last
// datagram holding one of its records is released (qos.Output.Released).
// The engine owns it.
type fragOwners struct {
	m map[*datagram.Datagram][]*fragBuf
	// recycled counts buffers returned to the pool.
	recycled uint64
}

// attach records that d holds one record of each of owners (an owner
// appears once per record).
func (o *fragOwners) attach(d *datagram.Datagram, owners []*fragBuf) {
	if o.m == nil {
		o.m = map[*datagram.Datagram][]*fragBuf{}
	}
	o.m[d] = owners
}

// release drops the refs d held and pools the buffers left with none.
func (o *fragOwners) release(d *datagram.Datagram) {
	if len(o.m) == 0 {
		return
	}
	owners, ok := o.m[d]
	if !ok {
		return
	}
	delete(o.m, d)
	for _, fb := range owners {
		o.unref(fb)
	}
}

// unref drops one ref of fb, pooling it at none.
func (o *fragOwners) unref(fb *fragBuf) {
	if fb.refs--; fb.refs == 0 {
		fragPools.put(fb)
		o.recycled++
	}
}
