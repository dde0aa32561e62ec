package node

import (
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/transport/datagram"
)

// fragBuf is a pooled buffer that records of embedded publishers lie in:
// the fragments of one large event (splitParts), or the records of many
// small ones (a record slab, recordSlabs). refs counts its holds: one for
// each publish on its way to the engine (pubReq.owner), which the engine
// turns into one for each of its records queued or retained on a sender
// stream (settleHolds), and for a slab a large bias while publishers
// carve from it (recordSlabs). Whoever drops the last hold returns it to
// the pool. A hold that is never dropped (a publish that did not reach the
// engine, a record that socket clients' queues share) leaves the buffer
// to the garbage collector, never to reuse.
type fragBuf struct {
	b    []byte
	refs atomic.Int32
}

// drop drops n holds on fb and reports whether they were the last: fb is
// then back in the pool and must not be touched.
func (fb *fragBuf) drop(n int32) bool {
	if fb.refs.Add(-n) != 0 {
		return false
	}
	fragPools.put(fb)
	return true
}

// ownerRun is n consecutive records of a datagram that lie in fb: the
// records of small events carved one after another share a slab, so a
// datagram of them names a slab or two.
type ownerRun struct {
	fb *fragBuf
	n  int32
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

// get returns a buffer of n bytes (its contents undefined) with one hold,
// the caller's.
func (p *fragPool) get(n int) *fragBuf {
	c, size := fragClass(n)
	if c >= 0 {
		if fb, ok := p.classes[c].Get().(*fragBuf); ok {
			fb.b = fb.b[:n]
			fb.refs.Store(1)
			return fb
		}
	}
	fb := &fragBuf{b: make([]byte, n, size)}
	fb.refs.Store(1)
	return fb
}

// put returns fb, which has no hold left, to its class; a buffer outside
// the pooled sizes is left to the garbage collector.
func (p *fragPool) put(fb *fragBuf) {
	if c, _ := fragClass(cap(fb.b)); c >= 0 {
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
	m map[*datagram.Datagram][]ownerRun
	// spare holds emptied run lists for the next datagrams, at most
	// maxSpareRuns of them.
	spare [][]ownerRun
	// recycled counts buffers returned to the pool.
	recycled uint64
}

// runs returns an empty run list, reused when one is spare.
func (o *fragOwners) runs() []ownerRun {
	if k := len(o.spare); k > 0 {
		r := o.spare[k-1]
		o.spare = o.spare[:k-1]
		return r
	}
	return make([]ownerRun, 0, 2)
}

// attach records that d holds the records of runs.
func (o *fragOwners) attach(d *datagram.Datagram, runs []ownerRun) {
	if o.m == nil {
		o.m = map[*datagram.Datagram][]ownerRun{}
	}
	o.m[d] = runs
}

// release drops the holds d had and pools the buffers left with none.
func (o *fragOwners) release(d *datagram.Datagram) {
	if len(o.m) == 0 {
		return
	}
	runs, ok := o.m[d]
	if !ok {
		return
	}
	delete(o.m, d)
	for _, r := range runs {
		o.drop(r.fb, r.n)
	}
	if len(o.spare) < maxSpareRuns {
		clear(runs)
		o.spare = append(o.spare, runs[:0])
	}
}

// drop drops n holds of fb, pooling it at none.
func (o *fragOwners) drop(fb *fragBuf, n int32) {
	if fb.drop(n) {
		o.recycled++
	}
}

// datagramFree keeps DATA datagrams the senders let go, and their record
// lists, for the engine's next ones: a datagram and its list are otherwise
// two allocations per datagram sent, fresh memory on a steady stream. Each
// list holds at most maxFreeDatagrams. The engine owns it.
type datagramFree struct {
	dgs  []*datagram.Datagram
	recs [][][]byte
}

// datagram returns an empty datagram.
func (f *datagramFree) datagram() *datagram.Datagram {
	if k := len(f.dgs); k > 0 {
		d := f.dgs[k-1]
		f.dgs[k-1] = nil
		f.dgs = f.dgs[:k-1]
		return d
	}
	return new(datagram.Datagram)
}

// records returns an empty record list for about want records.
func (f *datagramFree) records(want int) [][]byte {
	if k := len(f.recs); k > 0 {
		l := f.recs[k-1]
		f.recs[k-1] = nil
		f.recs = f.recs[:k-1]
		if cap(l) >= want {
			return l
		}
	}
	return make([][]byte, 0, max(want, 1))
}

// put keeps d, which no sender or transmission holds any more, and its
// record list, dropping the references they had.
func (f *datagramFree) put(d *datagram.Datagram) {
	if d.Records != nil && cap(d.Records) <= datagram.MaxRecords && len(f.recs) < maxFreeDatagrams {
		clear(d.Records)
		f.recs = append(f.recs, d.Records[:0])
	}
	if len(f.dgs) < maxFreeDatagrams {
		clear(d.Pieces)
		*d = datagram.Datagram{}
		f.dgs = append(f.dgs, d)
	}
}
