package rsbsocket

import "sync"

// pushResult is the outcome of offering a frame to a send queue.
type pushResult int

const (
	pushOK     pushResult = iota // queued
	pushFull                     // refused: the frame or byte bound is reached
	pushClosed                   // refused: the queue is closed
)

// sendQueue is a connection's bounded queue of outgoing frame bodies. Any
// goroutine may push; one writer takes batches. Frames count against the
// bounds from push until the writer releases them after writing, so the
// bounds cover what the writer holds too.
type sendQueue struct {
	mu        sync.Mutex
	pending   [][]byte
	frames    int // queued + being written
	bytes     int
	maxFrames int
	maxBytes  int
	closed    bool
	flush     bool          // on close: write what is pending, then finish
	wake      chan struct{} // 1-buffered: the writer has something to do
}

// newSendQueue returns an empty queue with the given bounds.
func newSendQueue(maxFrames, maxBytes int) *sendQueue {
	return &sendQueue{maxFrames: maxFrames, maxBytes: maxBytes, wake: make(chan struct{}, 1)}
}

// push offers body to the queue. An empty queue accepts any frame, so a
// frame larger than maxBytes still gets through one at a time.
func (q *sendQueue) push(body []byte) pushResult {
	q.mu.Lock()
	switch {
	case q.closed:
		q.mu.Unlock()
		return pushClosed
	case q.frames > 0 && (q.frames >= q.maxFrames || q.bytes+len(body) > q.maxBytes):
		q.mu.Unlock()
		return pushFull
	}
	q.pending = append(q.pending, body)
	q.frames++
	q.bytes += len(body)
	first := len(q.pending) == 1
	q.mu.Unlock()
	if first {
		q.signal()
	}
	return pushOK
}

// signal wakes the writer without blocking.
func (q *sendQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take hands the pending frames to the writer, which gives its emptied
// previous batch in exchange for reuse. closed reports that the queue is
// closed: the writer finishes once a take returns closed with no frames (an
// aborted queue has none left; a flushing one is drained first), and shuts
// down its sending side if flush is set.
func (q *sendQueue) take(spare [][]byte) (batch [][]byte, closed, flush bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	batch, q.pending = q.pending, spare[:0]
	return batch, q.closed, q.flush
}

// release returns the bound of frames the writer has written (or given up).
func (q *sendQueue) release(frames, bytes int) {
	q.mu.Lock()
	q.frames -= frames
	q.bytes -= bytes
	q.mu.Unlock()
}

// close closes the queue. With flush the writer writes what is pending before
// finishing; without, pending frames are discarded and their number and
// bytes returned.
func (q *sendQueue) close(flush bool) (discarded, discardedBytes int) {
	q.mu.Lock()
	q.flush = flush && (!q.closed || q.flush) // an abort overrides a flush
	q.closed = true
	if !q.flush {
		for _, b := range q.pending {
			discardedBytes += len(b)
		}
		discarded = len(q.pending)
		clear(q.pending)
		q.pending = q.pending[:0]
		q.frames -= discarded
		q.bytes -= discardedBytes
	}
	q.mu.Unlock()
	q.signal()
	return discarded, discardedBytes
}

// depth returns the frames and bytes in the queue, including those being
// written.
func (q *sendQueue) depth() (frames, bytes int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.frames, q.bytes
}
