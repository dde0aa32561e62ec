package engine

import "sync"

// pubQueue is the engine's bounded queue of publish requests. Publishers
// append one request each under a mutex; the engine takes everything
// queued at once (take), so a burst of small events costs the engine one
// lock per batch instead of a channel receive per event. ready wakes the
// engine when the queue goes from empty to not empty; a publisher that
// finds the queue full waits on room, which the engine's next take
// closes. The queue is full at limit requests or once their events' bytes
// would pass maxBytes (an empty queue takes any one event, however large).
// The engine takes only once it has handled what it took before, so the
// requests waiting for it, queued or taken, are at most twice the queue's
// bounds.
type pubQueue struct {
	mu       sync.Mutex
	items    []Request
	bytes    int // the events' bytes (Request.size) of items
	limit    int
	maxBytes int
	room     chan struct{} // made for the first waiter, closed by take; nil: none waits
	// ready holds a token while the engine has queued requests to look
	// at; capacity 1.
	ready chan struct{}
}

func newPubQueue(limit, maxBytes int) *pubQueue {
	return &pubQueue{limit: max(limit, 1), maxBytes: max(maxBytes, 1), ready: make(chan struct{}, 1)}
}

// push queues p unless the queue is full (see pubQueue); then it returns
// false and a channel closed once the engine has taken the queued
// requests.
func (q *pubQueue) push(p Request) (bool, <-chan struct{}) {
	q.mu.Lock()
	if len(q.items) >= q.limit || (len(q.items) > 0 && q.bytes+p.Size > q.maxBytes) {
		if q.room == nil {
			q.room = make(chan struct{})
		}
		room := q.room
		q.mu.Unlock()
		return false, room
	}
	q.items = append(q.items, p)
	q.bytes += p.Size
	first := len(q.items) == 1
	q.mu.Unlock()
	if first {
		q.signal()
	}
	return true, nil
}

// signal makes sure the engine looks at the queue.
func (q *pubQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns every queued request in order, leaving the queue with
// spare's memory (spare must be empty and hold no requests), and wakes
// the publishers waiting for room.
func (q *pubQueue) take(spare []Request) []Request {
	q.mu.Lock()
	got := q.items
	q.items, q.bytes = spare[:0], 0
	room := q.room
	q.room = nil
	q.mu.Unlock()
	if room != nil {
		close(room)
	}
	return got
}

// len returns the number of queued requests.
func (q *pubQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}
