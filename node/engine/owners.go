package engine

import (
	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/transport/datagram"
)

// ownerRun is n consecutive records of a datagram that lie in fb: the
// records of small events carved one after another share a slab, so a
// datagram of them names a slab or two.
type ownerRun struct {
	fb *fragmentation.Buf
	n  int32
}

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
func (o *fragOwners) drop(fb *fragmentation.Buf, n int32) {
	if fb.Drop(n) {
		o.recycled++
	}
}

// datagramFree keeps DATA datagrams the senders let go, and their record
// lists, and the engine's own ACKs once transmitted, for the engine's next
// ones: a datagram and its list are otherwise two allocations per datagram
// sent, fresh memory on a steady stream. Each
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
