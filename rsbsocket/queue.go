package rsbsocket

import "sync"

// pushResult is the outcome of offering a frame to a send queue.
type pushResult int

const (
	pushOK      pushResult = iota // queued
	pushFull                      // refused: the frame or byte bound is reached
	pushClosed                    // refused: the queue is closed
	pushWait                      // refused for now: at the high watermark; wait for room
	pushStalled                   // refused: at the high watermark and stalled
)

// sendQueue is a connection's bounded queue of outgoing frame bodies. Any
// goroutine may push; one writer takes batches. Frames count against the
// bounds from push until the writer releases them after writing, so the
// bounds cover what the writer holds too.
//
// Frames come in two ways. push (Deliver: frames from the network) never
// waits and is refused only at the bounds. offer (frames forwarded from
// another client) is refused already at the high watermark, below the
// bounds, and then hands out a channel that is closed once the queue is
// below the watermark again, so the forwarding reader can wait for it.
// The space between the watermark and the bounds stays for Deliver: a local
// publisher cannot crowd out the events from the network. When a wait
// times out, stall marks the queue stalled: offers are then refused at
// once, without a channel, until the writer has drained the queue to the
// low watermark.
type sendQueue struct {
	mu      sync.Mutex
	pending [][]byte
	frames  int // queued + being written
	bytes   int
	lim     queueLimits
	stalled bool
	room    chan struct{} // while offers wait: closed when they may retry
	closed  bool
	flush   bool          // on close: write what is pending, then finish
	wake    chan struct{} // 1-buffered: the writer has something to do
}

// queueLimits are a send queue's bounds and watermarks.
type queueLimits struct {
	maxFrames, maxBytes   int // bounds: push is refused above them
	highFrames, highBytes int // high watermark: offer is refused at or above it
	lowFrames, lowBytes   int // low watermark: a stalled queue recovers below it
}

// newQueueLimits derives the watermarks from the bounds.
func newQueueLimits(maxFrames, maxBytes int) queueLimits {
	pct := func(v, p int) int { return max(1, int(int64(v)*int64(p)/100)) }
	return queueLimits{
		maxFrames: maxFrames, maxBytes: maxBytes,
		highFrames: pct(maxFrames, queueHighPercent), highBytes: pct(maxBytes, queueHighPercent),
		lowFrames: pct(maxFrames, queueLowPercent), lowBytes: pct(maxBytes, queueLowPercent),
	}
}

// newSendQueue returns an empty queue with the given bounds.
func newSendQueue(maxFrames, maxBytes int) *sendQueue {
	return &sendQueue{lim: newQueueLimits(maxFrames, maxBytes), wake: make(chan struct{}, 1)}
}

// hasRoomLocked reports whether a body of n bytes may be queued: by push
// up to the bounds; by offer (forwarded) only while the queue is below its
// high watermark, which the body may then cross. An empty queue takes any
// frame, so a frame larger than the byte bound still gets through one at a
// time.
func (q *sendQueue) hasRoomLocked(n int, forwarded bool) bool {
	switch {
	case q.frames == 0:
		return true
	case q.frames >= q.lim.maxFrames || q.bytes+n > q.lim.maxBytes:
		return false
	}
	return !forwarded || (q.frames < q.lim.highFrames && q.bytes < q.lim.highBytes)
}

// addLocked appends body; it reports whether the writer must be woken.
func (q *sendQueue) addLocked(body []byte) bool {
	q.pending = append(q.pending, body)
	q.frames++
	q.bytes += len(body)
	return len(q.pending) == 1
}

// push offers body to the queue up to its bounds, without waiting.
func (q *sendQueue) push(body []byte) pushResult {
	q.mu.Lock()
	switch {
	case q.closed:
		q.mu.Unlock()
		return pushClosed
	case !q.hasRoomLocked(len(body), false):
		q.mu.Unlock()
		return pushFull
	}
	first := q.addLocked(body)
	q.mu.Unlock()
	if first {
		q.signal()
	}
	return pushOK
}

// offer offers body while the queue is below its high watermark. At or
// above it, offer returns pushStalled when the queue is stalled, else
// pushWait and a channel that is closed when the queue has drained below
// the watermark or is closed; then offer again.
func (q *sendQueue) offer(body []byte) (pushResult, <-chan struct{}) {
	q.mu.Lock()
	switch {
	case q.closed:
		q.mu.Unlock()
		return pushClosed, nil
	case q.hasRoomLocked(len(body), true):
		first := q.addLocked(body)
		q.mu.Unlock()
		if first {
			q.signal()
		}
		return pushOK, nil
	case q.stalled:
		q.mu.Unlock()
		return pushStalled, nil
	}
	if q.room == nil {
		q.room = make(chan struct{})
	}
	room := q.room
	q.mu.Unlock()
	return pushWait, room
}

// stall ends a wait that timed out: it offers body one last time and, when
// it still does not fit, marks the queue stalled and returns pushStalled.
// newly reports that this call marked it.
func (q *sendQueue) stall(body []byte) (res pushResult, newly bool) {
	res, _ = q.offer(body)
	if res != pushWait {
		return res, false
	}
	q.mu.Lock()
	newly = !q.stalled
	q.stalled = true
	q.mu.Unlock()
	return pushStalled, newly
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
// down its sending side if flush is set. When the queue has run dry, the
// memory of a past burst is let go instead of kept for reuse.
func (q *sendQueue) take(spare [][]byte) (batch [][]byte, closed, flush bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 && cap(spare) > keepBatchCap {
		spare = nil
	}
	batch, q.pending = q.pending, spare[:0]
	return batch, q.closed, q.flush
}

// release returns the bound of frames the writer has written (or given up),
// lets waiting offers retry once the queue is below the high watermark, and
// ends a stall once it is at the low watermark.
func (q *sendQueue) release(frames, bytes int) {
	q.mu.Lock()
	q.frames -= frames
	q.bytes -= bytes
	if q.room != nil && q.frames < q.lim.highFrames && q.bytes < q.lim.highBytes {
		close(q.room)
		q.room = nil
	}
	if q.stalled && q.frames <= q.lim.lowFrames && q.bytes <= q.lim.lowBytes {
		q.stalled = false
	}
	q.mu.Unlock()
}

// close closes the queue and ends every wait for room. With flush the
// writer writes what is pending before finishing; without, pending frames
// are discarded and their number and bytes returned.
func (q *sendQueue) close(flush bool) (discarded, discardedBytes int) {
	q.mu.Lock()
	q.flush = flush && (!q.closed || q.flush) // an abort overrides a flush
	q.closed = true
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
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
// written, and whether it is stalled.
func (q *sendQueue) depth() (frames, bytes int, stalled bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.frames, q.bytes, q.stalled
}
