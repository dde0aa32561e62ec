package client

import "sync/atomic"

// recvSlab is memory a socket link's reader reads frame bodies into, one
// after the other; the events decoded from them alias it. A slab whose
// events all went to listeners WithoutRetention is reused once each of
// them was given back and the reader has moved on to another slab: a
// stream of events then reads into memory the process already touched,
// not into fresh memory each collection cycle.
type recvSlab struct {
	buf []byte
	// refs counts the reader's reference and one per event out that will
	// be given back.
	refs atomic.Int32
	// kept is set by the reader when an event of the slab went to a sink
	// that keeps it: the slab is then left to the collector.
	kept atomic.Bool
	pool *slabPool
}

// lend takes a reference for an event given to a listener that gives it
// back (giveBack releases it).
func (s *recvSlab) lend() { s.refs.Add(1) }

// release drops a reference; the last one returns the slab to its pool
// unless an event of it was kept.
func (s *recvSlab) release() {
	if s.refs.Add(-1) == 0 && !s.kept.Load() {
		s.pool.put(s)
	}
}

// slabPool holds a link's reusable slabs, at most recvSlabPool of them.
type slabPool struct {
	free chan *recvSlab
	made atomic.Uint64 // slabs allocated, for tests
}

func newSlabPool() *slabPool { return &slabPool{free: make(chan *recvSlab, recvSlabPool)} }

// get returns a slab holding the caller's reference: a reused one, or a
// new one.
func (p *slabPool) get() *recvSlab {
	var s *recvSlab
	select {
	case s = <-p.free:
		s.kept.Store(false)
	default:
		p.made.Add(1)
		s = &recvSlab{buf: make([]byte, recvSlabBytes), pool: p}
	}
	s.refs.Store(1)
	return s
}

// put keeps s for reuse, or drops it when the pool is full.
func (p *slabPool) put(s *recvSlab) {
	select {
	case p.free <- s:
	default:
	}
}
