package engine

import (
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/rsbsocket"
)

// Queue orders deliveries between the goroutines that produce them (under
// the engine lock) and the one that runs them (the delivering goroutine).
// Network deliveries never run while the engine is locked: an engine
// section collects them in receive order and, before it unlocks, appends
// them here; one goroutine at a time runs the queue in order:
//
//   - a socket reader that handled its datagrams directly delivers them
//     itself when the queue is idle and empty (no copy, no hand-off: the
//     records still lie in the reader's buffer);
//   - everything else (batches the engine goroutine handled, a reader's
//     deliveries while another goroutine delivers) is delivered by the
//     node's delivery goroutine (Wake, Take), which a reader also hands
//     the queue to when it finds more queued after its own.
//
// Nothing that holds the engine lock ever waits for a delivery, so a
// handler may publish, subscribe and cancel. The engine goroutine never
// delivers: a handler waiting for the publish queue cannot hold it up.
//
// The deliveries wait in a list of chunks of deliveryChunkLen each: a
// burst that piles up while the sinks are slow only links more chunks,
// where one growing list would be copied whole at every doubling.
type Queue struct {
	mu sync.Mutex
	// head and tail are the queued chunks, in order; nil when empty.
	head, tail *Chunk
	// bytes is what the queued deliveries will cost the socket clients'
	// queues: their body and message bytes and rsbsocket.FrameOverhead
	// each.
	bytes  int
	active bool // a goroutine is delivering (owns the queue)
	// busy mirrors active for lock-free readers (Publish).
	busy atomic.Bool
	// queued mirrors bytes for lock-free readers (sendAcks).
	queued atomic.Int64
	wake   chan struct{}
}

// Chunk is a piece of the delivery queue: up to deliveryChunkLen
// deliveries in order, and the chunk that follows.
type Chunk struct {
	// Deliveries are the chunk's deliveries, in order.
	Deliveries []Delivery
	next       *Chunk
}

// chunkPool holds the chunks the delivering goroutine has run, for
// the next pushes: a busy node reuses its chunks, an idle one lets the
// garbage collector take them.
var chunkPool = sync.Pool{New: func() any {
	return &Chunk{Deliveries: make([]Delivery, 0, deliveryChunkLen)}
}}

func newQueue() *Queue { return &Queue{wake: make(chan struct{}, 1)} }

// claim makes the caller the delivering goroutine if the queue is idle and
// empty. The engine lock is held, so nothing collected earlier is pending.
func (q *Queue) claim() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.active || q.head != nil {
		return false
	}
	q.active = true
	q.busy.Store(true)
	return true
}

// push appends ds and wakes the delivery goroutine if nobody delivers.
func (q *Queue) push(ds []Delivery) {
	q.mu.Lock()
	for i := range ds {
		q.bytes += ds[i].Size + rsbsocket.FrameOverhead
	}
	q.appendLocked(ds)
	q.queued.Store(int64(q.bytes))
	wake := !q.active
	if wake {
		q.active = true
		q.busy.Store(true)
	}
	q.mu.Unlock()
	if wake {
		q.signal()
	}
}

// appendLocked copies ds behind the queued deliveries, linking new chunks
// as the last one fills up.
func (q *Queue) appendLocked(ds []Delivery) {
	for len(ds) > 0 {
		t := q.tail
		if t == nil || len(t.Deliveries) == cap(t.Deliveries) {
			c := chunkPool.Get().(*Chunk)
			if t == nil {
				q.head = c
			} else {
				t.next = c
			}
			q.tail, t = c, c
		}
		n := min(len(ds), cap(t.Deliveries)-len(t.Deliveries))
		t.Deliveries = append(t.Deliveries, ds[:n]...)
		ds = ds[n:]
	}
}

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// handOff is called by a reader that delivered its own deliveries: it
// gives the queue up, or to the delivery goroutine when more is queued.
func (q *Queue) handOff() {
	q.mu.Lock()
	more := q.head != nil
	if !more {
		q.active = false
		q.busy.Store(false)
	}
	q.mu.Unlock()
	if more {
		q.signal()
	}
}

// Wake returns the channel that signals the delivery goroutine: there is
// something to take.
func (q *Queue) Wake() <-chan struct{} { return q.wake }

// Take returns the queued chunks in order (Recycle returns the next), or nil after
// giving the queue up when nothing is queued. Only the delivering
// goroutine calls it, and hands each chunk back (Recycle) once it has run
// it.
func (q *Queue) Take() *Chunk {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == nil {
		q.active = false
		q.busy.Store(false)
		return nil
	}
	c := q.head
	q.head, q.tail = nil, nil
	q.bytes = 0
	q.queued.Store(0)
	return c
}

// Recycle empties a chunk that was run, so that it pins no body, and
// returns the chunk that followed it (nil after the last).
func (c *Chunk) Recycle() *Chunk {
	next := c.next
	clear(c.Deliveries)
	c.Deliveries, c.next = c.Deliveries[:0], nil
	chunkPool.Put(c)
	return next
}

// backlogged reports whether deliveries pile up past the high watermark:
// the engine then holds its ACKs so that remote senders stop at their
// window.
func (q *Queue) backlogged() bool {
	return q.queued.Load() > deliveryHighWater
}

// overLimit reports whether the queue holds more than deliveryMaxBytes;
// unreliable deliveries are dropped past it.
func (q *Queue) overLimit() bool {
	return q.queued.Load() > deliveryMaxBytes
}
