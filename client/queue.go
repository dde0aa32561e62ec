package client

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
)

// DropPolicy says which event a full participant queue drops.
type DropPolicy int

const (
	// DropNewest drops the arriving event (the default): what is queued is
	// delivered in order, newer events are lost.
	DropNewest DropPolicy = iota
	// DropOldest drops the oldest queued event to make room: the freshest
	// events are kept, as a Reader of sensor data usually wants.
	DropOldest
)

// queue is a bounded FIFO of received events between the goroutine that
// receives from the bus and the participant's consumer. push never blocks.
// Its ring starts small and doubles as events pile up, to its bound: a
// queue's memory (and the collector's work scanning it) follows what it
// holds, not the bound it may hold.
type queue struct {
	mu       sync.Mutex
	buf      []item // ring of capacity len(buf)
	head     int
	n        int
	max      int   // the bound in events
	bytes    int64 // what the queued events weigh (itemWeight)
	maxBytes int64 // the bound in bytes; one event alone always fits
	policy   DropPolicy
	closed   bool

	ready chan struct{} // 1-buffered: something may be queued
	done  chan struct{} // closed by close

	dropped atomic.Uint64
	// droppedBytes counts the drops of dropped that the byte bound made.
	droppedBytes atomic.Uint64
	pushed       atomic.Uint64
}

// newQueue returns an empty queue holding at most size events weighing at
// most maxBytes together (a single event of any weight fits an empty
// queue, so that no event is too large ever to be delivered).
func newQueue(size int, maxBytes int64, policy DropPolicy) *queue {
	return &queue{
		buf:      make([]item, min(size, queueInitial)),
		max:      size,
		maxBytes: maxBytes,
		policy:   policy,
		ready:    make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
}

// itemWeight is what an event counts against a queue's byte bound: its
// data and the fixed memory of an event.
func itemWeight(it item) int64 { return int64(len(it.ev.Data)) + queueEventOverhead }

// admitLocked makes room for an event of weight w by the policy: under
// DropNewest it reports false when the queue is full (the event is
// dropped and counted); under DropOldest it drops the oldest events until
// the new one fits. Either way a drop is counted, and a drop the byte
// bound made as such.
func (q *queue) admitLocked(w int64) bool {
	for q.n > 0 {
		overBytes := q.bytes+w > q.maxBytes
		if q.n < q.max && !overBytes {
			break
		}
		q.dropped.Add(1)
		if overBytes {
			q.droppedBytes.Add(1)
		}
		if q.policy != DropOldest {
			return false
		}
		q.bytes -= itemWeight(q.buf[q.head])
		q.buf[q.head] = item{}
		q.head = (q.head + 1) % len(q.buf)
		q.n--
	}
	if q.n == len(q.buf) && len(q.buf) < q.max {
		q.growLocked()
	}
	return true
}

// putLocked appends an admitted event.
func (q *queue) putLocked(it item, w int64) {
	q.buf[(q.head+q.n)%len(q.buf)] = it
	q.n++
	q.bytes += w
}

// push queues it, dropping by policy when full. It reports whether it was
// queued (under DropOldest it always is, at the cost of the oldest).
func (q *queue) push(it item) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	w := itemWeight(it)
	if !q.admitLocked(w) {
		q.mu.Unlock()
		return false
	}
	wasEmpty := q.n == 0
	q.putLocked(it, w)
	q.mu.Unlock()
	q.pushed.Add(1)
	if wasEmpty {
		// Only an empty queue has consumers waiting: one that found it
		// empty waits for this signal, and a consumer that takes an event
		// and leaves more signals the next (tryPopInto).
		q.signal()
	}
	return true
}

// pushMany queues items in order as push does, under one lock and with
// at most one signal, and returns how many it dropped (under DropOldest:
// older events it dropped to make room).
func (q *queue) pushMany(items []item) (dropped int) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return len(items)
	}
	wasEmpty := q.n == 0
	before := q.dropped.Load()
	accepted := 0
	for _, it := range items {
		w := itemWeight(it)
		if q.admitLocked(w) {
			q.putLocked(it, w)
			accepted++
		}
	}
	n := q.n
	dropped = int(q.dropped.Load() - before) // only pushes, under the lock, add to it
	q.mu.Unlock()
	q.pushed.Add(uint64(accepted))
	if wasEmpty && n > 0 {
		q.signal()
	}
	return dropped
}

// growLocked doubles the full ring, up to the bound, keeping the order.
func (q *queue) growLocked() {
	buf := make([]item, min(2*len(q.buf), q.max))
	k := copy(buf, q.buf[q.head:])
	copy(buf[k:], q.buf[:q.head])
	q.buf, q.head = buf, 0
}

// signal wakes one waiting consumer (coalesced).
func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// tryPop removes the oldest event, if any.
func (q *queue) tryPop() (item, bool) {
	var one [1]item
	if q.tryPopInto(one[:]) == 0 {
		return item{}, false
	}
	return one[0], true
}

// tryPopInto moves up to len(dst) of the oldest events into dst and
// returns how many.
func (q *queue) tryPopInto(dst []item) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 || q.closed {
		return 0
	}
	k := min(q.n, len(dst))
	for i := range k {
		dst[i] = q.buf[q.head]
		q.bytes -= itemWeight(dst[i])
		q.buf[q.head] = item{}
		if q.head++; q.head == len(q.buf) {
			q.head = 0
		}
	}
	q.n -= k
	if q.n > 0 {
		q.signal() // another consumer may take the next ones
	}
	return k
}

// pop waits for an event. It fails with ErrClosed after close, with
// ErrDisconnected (wrapping the cause) when dead closes first, or with the
// context's error.
func (q *queue) pop(ctx context.Context, dead <-chan struct{}, cause func() error) (item, error) {
	var one [1]item
	if _, err := q.popInto(ctx, dead, cause, one[:]); err != nil {
		return item{}, err
	}
	return one[0], nil
}

// popInto waits for events as pop does and moves up to len(dst) of them
// into dst, returning how many (at least one).
func (q *queue) popInto(ctx context.Context, dead <-chan struct{}, cause func() error, dst []item) (int, error) {
	for {
		if k := q.tryPopInto(dst); k > 0 {
			return k, nil
		}
		select {
		case <-q.ready:
		case <-q.done:
			return 0, ErrClosed
		case <-dead:
			if k := q.tryPopInto(dst); k > 0 {
				return k, nil
			}
			return 0, cause()
		case <-ctx.Done():
			return 0, ctxError(ctx)
		}
	}
}

// await waits until an event may be queued (a consumer then tries to
// take it), or fails with ErrClosed after close or the context's error.
func (q *queue) await(ctx context.Context) error {
	select {
	case <-q.ready:
		return nil
	case <-q.done:
		return ErrClosed
	case <-ctx.Done():
		return ctxError(ctx)
	}
}

// close discards what is queued and wakes every consumer. Idempotent.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.closed = true
	clear(q.buf)
	q.n, q.bytes = 0, 0
	close(q.done)
}

// len returns the number of queued events.
func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// weight returns what the queued events weigh against the byte bound.
func (q *queue) weight() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytes
}

// isClosed reports whether close was called.
func (q *queue) isClosed() bool {
	select {
	case <-q.done:
		return true
	default:
		return false
	}
}

// String names the policy.
func (p DropPolicy) String() string {
	switch p {
	case DropNewest:
		return "drop-newest"
	case DropOldest:
		return "drop-oldest"
	}
	return "DropPolicy(" + strconv.Itoa(int(p)) + ")"
}
