package rsbsocket

import (
	"sync"
	"sync/atomic"
)

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
// goroutine may push; one owner at a time writes. Frames count against the
// bounds from push until the owner releases them after writing, so the
// bounds cover what the owner holds too.
//
// The writing side has no goroutine of its own while the queue is idle. A
// push (Deliver) that finds no owner makes its caller the owner, and the
// caller starts a writer goroutine that exits once the queue is empty. An
// offer (forward) leaves the frame without an owner: the forwarding reader
// flushes its targets before it reads on (claim), writing on its own
// goroutine what the socket takes without blocking and handing the rest to
// a writer goroutine. The owner lets go (letGo) only when nothing is
// pending, so a frame in the queue always has an owner or a reader that is
// about to flush it. A flushing close makes the owner, or the closer when
// there is none, perform the final drain (claimFinal), which ends with
// SHUT_WR.
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
	mu sync.Mutex
	// The frames not yet taken by the owner, oldest first: full blocks of
	// queueBlock frames in blocks[head:], then pending, the list being
	// filled (the first of a backlog from frameLists, the later ones
	// blocks from frameBlocks). A backlog of any depth is thus a list of
	// equal blocks, never one long list grown by copying, and its blocks
	// go back to the pool once the owner has written them.
	pending [][]byte
	blocks  [][][]byte
	head    int
	frames  int // queued + being written
	bytes   int // their body bytes; the byte bounds apply to chargeLocked
	lim     queueLimits
	stalled bool
	room    chan struct{} // while offers wait: closed when they may retry
	closed  bool
	flush   bool          // on close: write what is pending, then finish
	owned   bool          // an owner writes (package doc: Who writes a connection's socket)
	final   bool          // the final drain of a flushing close is claimed
	idle    chan struct{} // while waitIdle waits: closed once no owner is left
	// heavy, if set, counts the server's queues at or above their backlog
	// floor (backlogFloorLocked);
	// isHeavy says whether this queue is counted.
	heavy   *atomic.Int64
	isHeavy bool
}

// queueLimits are a send queue's bounds and watermarks. The byte bounds
// apply to the queue's charge: body bytes plus FrameOverhead per frame.
type queueLimits struct {
	maxFrames, maxBytes   int // bounds: push is refused above them
	highFrames, highBytes int // high watermark: offer is refused at or above it
	lowFrames, lowBytes   int // low watermark: a stalled queue recovers below it
	overhead              int // charged per frame besides its body
}

// newQueueLimits derives the watermarks from the bounds.
func newQueueLimits(maxFrames, maxBytes int) queueLimits {
	pct := func(v, p int) int { return max(1, int(int64(v)*int64(p)/100)) }
	return queueLimits{
		maxFrames: maxFrames, maxBytes: maxBytes,
		highFrames: pct(maxFrames, queueHighPercent), highBytes: pct(maxBytes, queueHighPercent),
		lowFrames: pct(maxFrames, queueLowPercent), lowBytes: pct(maxBytes, queueLowPercent),
		overhead: FrameOverhead,
	}
}

// newSendQueue returns an empty queue with the given bounds.
func newSendQueue(maxFrames, maxBytes int) *sendQueue {
	return &sendQueue{lim: newQueueLimits(maxFrames, maxBytes)}
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
	case q.frames >= q.lim.maxFrames || q.chargeLocked()+n+q.lim.overhead > q.lim.maxBytes:
		return false
	}
	return !forwarded || q.belowHighLocked()
}

// chargeLocked is what the queued frames count against the byte bounds:
// their bodies and the overhead (FrameOverhead) each.
func (q *sendQueue) chargeLocked() int { return q.bytes + q.frames*q.lim.overhead }

// belowHighLocked reports whether the queue is below its high watermark.
func (q *sendQueue) belowHighLocked() bool {
	return q.frames < q.lim.highFrames && q.chargeLocked() < q.lim.highBytes
}

// addLocked appends body.
func (q *sendQueue) addLocked(body []byte) {
	switch {
	case q.pending == nil:
		q.pending = takeFrameList()
	case len(q.pending) >= queueBlock:
		q.blocks = append(q.blocks, q.pending)
		q.pending = takeBlock()
	}
	q.pending = append(q.pending, body)
	q.frames++
	q.bytes += len(body)
	q.noteLocked()
}

// emptyLocked reports whether no frame waits to be taken.
func (q *sendQueue) emptyLocked() bool { return len(q.pending) == 0 && q.head == len(q.blocks) }

// nextBlockLocked removes and returns the oldest full block, or nil when
// there is none.
func (q *sendQueue) nextBlockLocked() [][]byte {
	if q.head == len(q.blocks) {
		return nil
	}
	b := q.blocks[q.head]
	q.blocks[q.head] = nil
	if q.head++; q.head == len(q.blocks) {
		q.blocks, q.head = q.blocks[:0], 0
	}
	return b
}

// backlogFloorLocked reports whether the queue is at or above the lowest
// backlog threshold BackloggedWithin may apply (its frame watermark, or
// the lesser of its byte watermark and a quarter of its byte bound): a
// server none of whose queues is there has no backlog, whatever the
// reserve.
func (q *sendQueue) backlogFloorLocked() bool {
	return q.frames >= q.lim.highFrames || q.chargeLocked() >= min(q.lim.highBytes, q.lim.maxBytes/4)
}

// noteLocked keeps the server's count of heavy queues current after the
// queue's depth changed.
func (q *sendQueue) noteLocked() {
	if h := q.backlogFloorLocked(); h != q.isHeavy && q.heavy != nil {
		q.isHeavy = h
		if h {
			q.heavy.Add(1)
		} else {
			q.heavy.Add(-1)
		}
	}
}

// detach takes the queue out of the server's count of heavy queues, for a
// connection that is gone.
func (q *sendQueue) detach() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.isHeavy {
		q.heavy.Add(-1)
		q.isHeavy = false
	}
	q.heavy = nil
}

// push offers body to the queue up to its bounds, without waiting. When it
// queued body and the queue had no owner, start is set: the caller is now
// the owner and must start a writer.
func (q *sendQueue) push(body []byte) (res pushResult, start bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return pushClosed, false
	case !q.hasRoomLocked(len(body), false):
		return pushFull, false
	}
	q.addLocked(body)
	start = !q.owned
	q.owned = true
	return pushOK, start
}

// pushUnowned is push for a caller that flushes the queue later (a
// DeliverBatch): it does not take ownership.
func (q *sendQueue) pushUnowned(body []byte) pushResult {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return pushClosed
	case !q.hasRoomLocked(len(body), false):
		return pushFull
	}
	q.addLocked(body)
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
		q.addLocked(body)
		q.mu.Unlock()
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

// claim makes the caller the owner when the queue has pending frames, no
// owner and is open. It reports whether it did.
func (q *sendQueue) claim() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.owned || q.closed || q.emptyLocked() {
		return false
	}
	q.owned = true
	return true
}

// letGo ends the caller's ownership unless frames are pending (done and
// final false: write them) or a flushing close needs its final drain (final
// true: the caller, still the owner, must perform it).
func (q *sendQueue) letGo() (done, final bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed && q.flush && !q.final:
		q.final = true
		return false, true
	case !q.closed && !q.emptyLocked():
		return false, false
	}
	q.disownLocked()
	return true, false
}

// claimFinal makes the caller the owner that performs the final drain of a
// flushing close, when there is no owner and no drain was claimed yet. An
// existing owner performs it instead when it lets go.
func (q *sendQueue) claimFinal() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.owned || q.final {
		return false
	}
	q.owned, q.final = true, true
	return true
}

// endFinal ends the ownership of the final drain.
func (q *sendQueue) endFinal() {
	q.mu.Lock()
	q.disownLocked()
	q.mu.Unlock()
}

// disownLocked leaves the queue without owner and ends waitIdle's waits.
// The queue is empty then: the frame list a burst grew is let go, and so
// is the list of blocks of a past backlog, so an idle connection keeps
// only a small one.
func (q *sendQueue) disownLocked() {
	q.owned = false
	if len(q.pending) == 0 && cap(q.pending) > keepIdleCap {
		giveFrameList(q.pending)
		q.pending = nil
	}
	if q.emptyLocked() && cap(q.blocks) > 0 {
		q.blocks, q.head = nil, 0
	}
	if q.idle != nil {
		close(q.idle)
		q.idle = nil
	}
}

// waitIdle returns once the queue has no owner. Only call it after close:
// an open queue may get a new owner at any time.
func (q *sendQueue) waitIdle() {
	q.mu.Lock()
	if !q.owned {
		q.mu.Unlock()
		return
	}
	if q.idle == nil {
		q.idle = make(chan struct{})
	}
	idle := q.idle
	q.mu.Unlock()
	<-idle
}

// take hands the oldest pending frames to the owner, a block or what the
// block being filled holds; the owner gives its emptied previous batch in
// exchange, for reuse. closed and flush report how the queue is closed
// (the final drain takes until nothing is left). When the queue has run
// dry, the memory of a past burst is let go instead of kept for reuse.
func (q *sendQueue) take(spare [][]byte) (batch [][]byte, closed, flush bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if batch = q.nextBlockLocked(); batch != nil {
		if cap(spare) > 0 {
			giveFrameList(spare[:0])
		}
		return batch, q.closed, q.flush
	}
	if len(q.pending) == 0 && cap(spare) > keepBatchCap {
		spare = nil
	}
	batch, q.pending = q.pending, spare[:0]
	return batch, q.closed, q.flush
}

// takeInto appends the oldest pending frames (a block, or what the block
// being filled holds) to dst for the owner, keeping the frame list for
// reuse unless a burst grew it.
func (q *sendQueue) takeInto(dst [][]byte) [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	if b := q.nextBlockLocked(); b != nil {
		dst = append(dst, b...)
		giveFrameList(b)
		return dst
	}
	dst = append(dst, q.pending...)
	clear(q.pending)
	if cap(q.pending) > keepBatchCap {
		q.pending = nil
	} else {
		q.pending = q.pending[:0]
	}
	return dst
}

// release returns the bound of frames the writer has written (or given up),
// lets waiting offers retry once the queue is below the high watermark, and
// ends a stall once it is at the low watermark.
func (q *sendQueue) release(frames, bytes int) {
	q.mu.Lock()
	q.frames -= frames
	q.bytes -= bytes
	q.noteLocked()
	if q.room != nil && q.belowHighLocked() {
		close(q.room)
		q.room = nil
	}
	if q.stalled && q.frames <= q.lim.lowFrames && q.chargeLocked() <= q.lim.lowBytes {
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
		for b := q.nextBlockLocked(); b != nil; b = q.nextBlockLocked() {
			discarded += len(b)
			discardedBytes += bodyBytes(b)
			giveFrameList(b)
		}
		discarded += len(q.pending)
		discardedBytes += bodyBytes(q.pending)
		clear(q.pending)
		q.pending = q.pending[:0]
		q.frames -= discarded
		q.bytes -= discardedBytes
		q.noteLocked()
	}
	q.mu.Unlock()
	return discarded, discardedBytes
}

// bodyBytes sums the lengths of frames.
func bodyBytes(frames [][]byte) (n int) {
	for _, b := range frames {
		n += len(b)
	}
	return n
}

// depth returns the frames and body bytes in the queue, including those
// being written, its charge against the byte bounds and whether it is
// stalled.
func (q *sendQueue) depth() (frames, bytes, charge int, stalled bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.frames, q.bytes, q.chargeLocked(), q.stalled
}

// frameLists holds the frame lists of queues that went idle (empty, up to
// keepBatchCap long), for the next queue that gets frames: a connection
// that receives in bursts reuses a list instead of growing one per burst,
// while an idle one keeps none.
var frameLists = sync.Pool{New: func() any { return new([][]byte) }}

// takeFrameList returns an empty frame list, from frameLists if it has one.
func takeFrameList() [][]byte {
	p := frameLists.Get().(*[][]byte)
	l := *p
	*p = nil
	return l[:0]
}

// frameBlocks holds the blocks of past backlogs (frame lists of
// queueBlock frames), for the next backlog.
var frameBlocks = sync.Pool{New: func() any { return new([queueBlock][]byte) }}

// takeBlock returns an empty block of queueBlock frames.
func takeBlock() [][]byte { return frameBlocks.Get().(*[queueBlock][]byte)[:0] }

// giveFrameList hands the list l, whose frames are no longer needed, to
// frameBlocks when it is a block, else to frameLists unless a burst grew
// it past keepBatchCap.
func giveFrameList(l [][]byte) {
	switch c := cap(l); {
	case c == queueBlock:
		b := (*[queueBlock][]byte)(l[:queueBlock])
		clear(b[:])
		frameBlocks.Put(b)
	case c <= keepBatchCap:
		clear(l[:c])
		p := new([][]byte)
		*p = l[:0]
		frameLists.Put(p)
	}
}
