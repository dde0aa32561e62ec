package client

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// recvSlab is memory a socket link's reader reads frame bodies into, one
// after the other (a large slab holds one body); the events decoded from
// them alias it. A slab whose events all went to listeners
// WithoutRetention is reused once each of them was given back and the
// reader has moved on to another slab: a stream of events then reads into
// memory the process already touched, not into fresh memory each
// collection cycle.
type recvSlab struct {
	buf []byte
	// refs counts the reader's reference, worth readerRefs, less what the
	// reader settled for the events it lent out when it let go (leave),
	// less the events given back.
	refs atomic.Int32
	// kept is set by the reader when an event of the slab went to a sink
	// that keeps it: the slab is then left to the collector.
	kept  atomic.Bool
	pool  *slabPool
	class int // the large size class, or -1 for a slab of recvSlabBytes
}

// readerRefs is what the reader's reference on a slab is worth. An event
// lent out of the slab to a listener that gives it back takes one of them
// without touching refs: the reader counts its lends and settles them when
// it lets the slab go (leave). Lending then costs no atomic operation on
// memory the listeners' goroutines, on other CPUs, write when they give
// events back. A slab holds far fewer events than readerRefs.
const readerRefs = 1 << 30

// leave drops the reader's reference to s, of which lent events were lent
// out (and will be given back, each releasing one).
func (s *recvSlab) leave(lent int32) { s.drop(readerRefs - lent) }

// release drops the reference of an event given back.
func (s *recvSlab) release() { s.drop(1) }

// drop drops n references; the last one returns the slab to its pool
// unless an event of it was kept.
func (s *recvSlab) drop(n int32) {
	if s.refs.Add(-n) == 0 && !s.kept.Load() {
		s.pool.put(s)
	}
}

// slabPool holds a link's reusable slabs: at most recvSlabPool of
// recvSlabBytes, and large ones for single bodies above recvSlabBytes, by
// size class, up to recvLargePoolBytes in all.
type slabPool struct {
	free  chan *recvSlab
	large *classLists[*recvSlab]
	made  atomic.Uint64 // slabs allocated, for tests
	trim  idleTrim
}

func newSlabPool() *slabPool {
	p := &slabPool{free: make(chan *recvSlab, recvSlabPool), large: newClassLists[*recvSlab](recvLargePoolBytes)}
	p.trim = idleTrim{idle: poolIdle, empty: p.empty}
	return p
}

// empty drops every pooled slab.
func (p *slabPool) empty() {
	drain(p.free)
	p.large.empty()
}

// largeClass returns the size class of a body of n bytes, above
// recvSlabBytes: class c holds slabs of largeClassBytes(c). Each power of
// two is split in four steps, so a slab is at most a quarter larger than
// its body (1 MiB and a frame's fields: 1.25 MiB).
func largeClass(n int) (c int, ok bool) {
	if n <= recvSlabBytes || n > recvLargeMax {
		return 0, false
	}
	k := bits.Len(uint(n-1)) - 1 // 2^k < n ≤ 2^(k+1)
	step := 1 << (k - 2)
	q := (n - 1<<k + step - 1) / step // 1..4
	return (k-recvSlabShift)*4 + q - 1, true
}

func largeClassBytes(c int) int {
	k, q := recvSlabShift+c/4, c%4+1
	return 1<<k + q<<(k-2)
}

// get returns a slab holding the caller's (a reader's) reference: a
// reused one, or a new one.
func (p *slabPool) get() *recvSlab {
	p.trim.used()
	var s *recvSlab
	select {
	case s = <-p.free:
		s.kept.Store(false)
	default:
		p.made.Add(1)
		s = &recvSlab{buf: make([]byte, recvSlabBytes), pool: p, class: -1}
	}
	s.refs.Store(readerRefs)
	return s
}

// getLarge returns a large slab for a body of n bytes holding the caller's
// (a reader's) reference, or nil when n has no size class.
func (p *slabPool) getLarge(n int) *recvSlab {
	c, ok := largeClass(n)
	if !ok {
		return nil
	}
	p.trim.used()
	s, ok := p.large.take(c)
	if ok {
		s.kept.Store(false)
	} else {
		p.made.Add(1)
		s = &recvSlab{buf: make([]byte, largeClassBytes(c)), pool: p, class: c}
	}
	s.refs.Store(readerRefs)
	return s
}

// put keeps s for reuse, or drops it when its free list, or the large
// ones' byte budget, is full.
func (p *slabPool) put(s *recvSlab) {
	kept := false
	if s.class < 0 {
		select {
		case p.free <- s:
			kept = true
		default:
		}
	} else {
		kept = p.large.give(s.class, s)
	}
	if kept {
		p.trim.arm()
	}
}

// bufPool keeps a sender's large frame buffers for reuse, by the size
// classes of the large receive slabs, up to a byte budget.
type bufPool struct {
	lists *classLists[[]byte]
	made  atomic.Uint64 // buffers of a class allocated, for tests
	trim  idleTrim
}

func newBufPool(budget int) *bufPool {
	p := &bufPool{lists: newClassLists[[]byte](budget)}
	p.trim = idleTrim{idle: poolIdle, empty: p.lists.empty}
	return p
}

// get returns an empty buffer with room for n bytes, and whether it is the
// pool's (a size with no class gets memory of its own).
func (p *bufPool) get(n int) ([]byte, bool) {
	c, ok := largeClass(n)
	if !ok {
		return make([]byte, 0, n), false
	}
	p.trim.used()
	if b, ok := p.lists.take(c); ok {
		return b[:0], true
	}
	p.made.Add(1)
	return make([]byte, 0, largeClassBytes(c)), true
}

// put keeps b, a buffer get gave out, for reuse, within the budget.
func (p *bufPool) put(b []byte) {
	c, ok := largeClass(cap(b))
	if ok && largeClassBytes(c) == cap(b) && p.lists.give(c, b) {
		p.trim.arm()
	}
}

// classLists are free lists by large size class (largeClass), holding at
// most budget bytes in all.
type classLists[T any] struct {
	free   [recvLargeClasses]chan T
	bytes  atomic.Int64 // what the lists hold
	budget int64
}

func newClassLists[T any](budget int) *classLists[T] {
	l := &classLists[T]{budget: int64(budget)}
	for c := range l.free {
		l.free[c] = make(chan T, max(1, budget/largeClassBytes(c)))
	}
	return l
}

// take returns a value of class c from its list, if any.
func (l *classLists[T]) take(c int) (T, bool) {
	select {
	case v := <-l.free[c]:
		l.bytes.Add(-int64(largeClassBytes(c)))
		return v, true
	default:
		var zero T
		return zero, false
	}
}

// give keeps v, of class c, unless its list or the budget is full.
func (l *classLists[T]) give(c int, v T) bool {
	size := int64(largeClassBytes(c))
	if l.bytes.Add(size) > l.budget {
		l.bytes.Add(-size)
		return false
	}
	select {
	case l.free[c] <- v:
		return true
	default:
		l.bytes.Add(-size)
		return false
	}
}

// empty drops what the lists hold.
func (l *classLists[T]) empty() {
	for c := range l.free {
		l.bytes.Add(-int64(largeClassBytes(c) * drain(l.free[c])))
	}
}

// drain empties ch without waiting and returns how many values it held.
func drain[T any](ch chan T) int {
	for n := 0; ; n++ {
		select {
		case <-ch:
		default:
			return n
		}
	}
}

// idleTrim empties a pool that nobody took from for a whole period of
// idle: a link that went quiet after a burst leaves its pooled memory to
// the collector. Taking from the pool counts a use; pooling something arms
// a timer, which empties the pool when no use came during its period and
// looks again a period later otherwise. The hot path pays an atomic add
// per take.
type idleTrim struct {
	idle  time.Duration
	empty func()
	uses  atomic.Uint64
	armed atomic.Bool
}

func (t *idleTrim) used() { t.uses.Add(1) }

// arm starts the timer unless it runs.
func (t *idleTrim) arm() {
	if t.armed.CompareAndSwap(false, true) {
		t.after(t.uses.Load())
	}
}

// after empties the pool in a period unless a use comes after the seen
// ones.
func (t *idleTrim) after(seen uint64) {
	time.AfterFunc(t.idle, func() {
		if now := t.uses.Load(); now != seen {
			t.after(now)
			return
		}
		t.armed.Store(false)
		t.empty()
	})
}
