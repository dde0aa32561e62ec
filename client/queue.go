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
	mu     sync.Mutex
	buf    []item // ring of capacity len(buf)
	head   int
	n      int
	max    int // the bound
	policy DropPolicy
	closed bool

	ready chan struct{} // 1-buffered: something may be queued
	done  chan struct{} // closed by close

	dropped atomic.Uint64
	pushed  atomic.Uint64
}

// newQueue returns an empty queue holding at most size events.
func newQueue(size int, policy DropPolicy) *queue {
	return &queue{
		buf:    make([]item, min(size, queueInitial)),
		max:    size,
		policy: policy,
		ready:  make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
}

// push queues it, dropping by policy when full. It reports whether it was
// queued (under DropOldest it always is, at the cost of the oldest).
func (q *queue) push(it item) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	if q.n == len(q.buf) && len(q.buf) < q.max {
		q.growLocked()
	}
	if q.n == len(q.buf) {
		if q.policy != DropOldest {
			q.mu.Unlock()
			q.dropped.Add(1)
			return false
		}
		q.buf[q.head] = item{}
		q.head = (q.head + 1) % len(q.buf)
		q.n--
		q.dropped.Add(1)
	}
	wasEmpty := q.n == 0
	q.buf[(q.head+q.n)%len(q.buf)] = it
	q.n++
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
	for _, it := range items {
		if q.n == len(q.buf) && len(q.buf) < q.max {
			q.growLocked()
		}
		if q.n == len(q.buf) {
			dropped++
			if q.policy != DropOldest {
				continue
			}
			q.buf[q.head] = item{}
			q.head = (q.head + 1) % len(q.buf)
			q.n--
		}
		q.buf[(q.head+q.n)%len(q.buf)] = it
		q.n++
	}
	n := q.n
	q.mu.Unlock()
	if q.policy == DropOldest {
		q.pushed.Add(uint64(len(items)))
	} else {
		q.pushed.Add(uint64(len(items) - dropped))
	}
	q.dropped.Add(uint64(dropped))
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

// close discards what is queued and wakes every consumer. Idempotent.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.closed = true
	clear(q.buf)
	q.n = 0
	close(q.done)
}

// len returns the number of queued events.
func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
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
