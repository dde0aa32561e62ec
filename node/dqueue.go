package node

import (
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/rsbsocket/frame"
)

// deliveryQueue orders deliveries between the goroutines that produce them
// (under the engine lock) and the one that runs them. The deliveries wait
// in a list of chunks of deliveryChunkLen each: a burst that piles up while
// the sinks are slow only links more chunks, where one growing list would
// be copied whole at every doubling.
type deliveryQueue struct {
	mu sync.Mutex
	// head and tail are the queued chunks, in order; nil when empty.
	head, tail *deliveryChunk
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
	// recent, dec and match belong to the delivering goroutine.
	recent recentEvents
	// sockOut collects the socket clients the deliveries queued frames to;
	// it belongs to the delivering goroutine.
	sockOut rsbsocket.DeliverBatch
	frames  frame.FrameParser // parses the bodies for socket clients
	dec     notification.Decoder
	// bodies decodes network bodies for embedded subscriptions with dec
	// and slabs; its scratch event is the one borrowed deliveries reuse.
	bodies bodyDecoder
	match  matchCache
	// slabs takes the copies of bodies that leave a reader's buffer on
	// the delivering goroutine.
	slabs bodySlabs
}

// deliveryChunk is a piece of the delivery queue: up to deliveryChunkLen
// deliveries in order, and the chunk that follows.
type deliveryChunk struct {
	ds   []delivery
	next *deliveryChunk
}

// deliveryChunks holds the chunks the delivering goroutine has run, for
// the next pushes: a busy node reuses its chunks, an idle one lets the
// garbage collector take them.
var deliveryChunks = sync.Pool{New: func() any {
	return &deliveryChunk{ds: make([]delivery, 0, deliveryChunkLen)}
}}

func newDeliveryQueue() *deliveryQueue {
	q := &deliveryQueue{wake: make(chan struct{}, 1)}
	q.bodies = bodyDecoder{dec: &q.dec, slabs: &q.slabs}
	return q
}

// claim makes the caller the delivering goroutine if the queue is idle and
// empty. The engine lock is held, so nothing collected earlier is pending.
func (q *deliveryQueue) claim() bool {
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
func (q *deliveryQueue) push(ds []delivery) {
	q.mu.Lock()
	for i := range ds {
		q.bytes += ds[i].size + rsbsocket.FrameOverhead
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
func (q *deliveryQueue) appendLocked(ds []delivery) {
	for len(ds) > 0 {
		t := q.tail
		if t == nil || len(t.ds) == cap(t.ds) {
			c := deliveryChunks.Get().(*deliveryChunk)
			if t == nil {
				q.head = c
			} else {
				t.next = c
			}
			q.tail, t = c, c
		}
		n := min(len(ds), cap(t.ds)-len(t.ds))
		t.ds = append(t.ds, ds[:n]...)
		ds = ds[n:]
	}
}

func (q *deliveryQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// handOff is called by a reader that delivered its own deliveries: it
// gives the queue up, or to the delivery goroutine when more is queued.
func (q *deliveryQueue) handOff() {
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

// take returns the queued chunks in order, or nil after giving the queue
// up when nothing is queued. Only the delivering goroutine calls it, and
// hands each chunk back (recycle) once it has run it.
func (q *deliveryQueue) take() *deliveryChunk {
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

// recycle empties a chunk that was run, so that it pins no body, and
// returns the chunk that followed it.
func recycle(c *deliveryChunk) *deliveryChunk {
	next := c.next
	clear(c.ds)
	c.ds, c.next = c.ds[:0], nil
	deliveryChunks.Put(c)
	return next
}

// backlogged reports whether deliveries pile up past the high watermark:
// the engine then holds its ACKs so that remote senders stop at their
// window.
func (q *deliveryQueue) backlogged() bool {
	return q.queued.Load() > deliveryHighWater
}

// overLimit reports whether the queue holds more than deliveryMaxBytes;
// unreliable deliveries are dropped past it.
func (q *deliveryQueue) overLimit() bool {
	return q.queued.Load() > deliveryMaxBytes
}
