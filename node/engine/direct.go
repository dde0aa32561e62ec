package engine

import (
	"sync"
	"time"
)

// direct publishes p on the caller's goroutine when the engine is idle,
// nothing is queued, the flow window is open and publishes are sparse (a
// burst goes through the queue, where small events share datagrams). It
// reports whether it did.
//
// While a delivery runs (a handler replying, typically) a publish is taken
// directly however close it follows the previous one: its records wait in
// the senders' pending datagrams, where replies to a batch of events share
// datagrams, and the delivering goroutine sends them when its batch is done
// (FlushReplies). A publisher on another goroutine that happens to run
// meanwhile is sent at that point too.
func (e *Engine) direct(p Request) bool {
	if !e.idle() || e.holding.Load() {
		// A burst is queued (the engine stamps lastPublish as it takes
		// them), or a Hold wants inputs queued: this publish goes to the
		// queue without reading the clock.
		return false
	}
	now := time.Now()
	prev := time.Unix(0, e.lastPublish.Swap(now.UnixNano()))
	reply := e.dq.busy.Load()
	if !reply && now.Sub(prev) < directGap {
		return false
	}
	// A section another goroutine holds is brief, and the engine goroutine
	// would wait for it too: the publisher waits rather than queue.
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.idle() || len(e.blocked) > 0 {
		return false
	}
	e.publish(p, now)
	if reply {
		e.held.Store(true)
		if e.dq.busy.Load() {
			// The delivering goroutine flushes after it set busy to false
			// or after its batch, whichever comes first; both follow this.
			return true
		}
	}
	e.flush(now)
	e.queueDeliveries()
	return true
}

// FlushReplies sends what publishes made during a delivery left pending
// and reports whether there were any. The delivering goroutine calls it
// after each batch and after it gave the queue up; it holds no lock the
// engine waits for, so it may block on mu.
func (e *Engine) FlushReplies() bool {
	if !e.held.Swap(false) {
		return false
	}
	e.mu.Lock()
	e.flush(time.Now())
	e.queueDeliveries()
	e.mu.Unlock()
	return true
}

// queueDeliveries ends a section that does not deliver itself: what it
// collected goes to the delivery queue, in order. mu is held.
func (e *Engine) queueDeliveries() {
	if len(e.dl) == 0 {
		return
	}
	e.dq.push(e.dl)
	clear(e.dl)
	e.dl = e.dl[:0]
}

// directReceive handles b on the caller's (socket reader's) goroutine when
// the engine is idle and nothing is queued. It reports whether it did.
// b's datagrams lie in the reader's buffer: the deliveries they release are
// made before directReceive returns, by this goroutine when no other one
// delivers, else they are copied and queued.
func (e *Engine) directReceive(b rxBatch) bool {
	if !e.idle() || e.holding.Load() {
		return false
	}
	if !e.mu.TryLock() {
		// Another section holds the engine: a reader, a direct publish or
		// the timer, each brief (no section waits for a delivery). The
		// engine goroutine would have to wait for the same lock, and a
		// hand-off to it costs two goroutine wake-ups, so the reader waits.
		e.paths.rxWaited.Add(1)
		e.mu.Lock()
	}
	if !e.idle() {
		e.mu.Unlock()
		return false
	}
	e.paths.rxDirect.Add(1)
	now := time.Now()
	e.receive(b, now)
	e.flush(now)
	var own *[]Delivery
	if len(e.dl) > 0 {
		if deliveryBytes(e.dl) <= e.env.Sinks.InlineLimit() && e.dq.claim() {
			own = dlPool.Get().(*[]Delivery)
			*own, e.dl = e.dl, (*own)[:0]
		} else {
			stabilize(e.dl, &e.slabs)
			e.queueDeliveries()
		}
	}
	e.mu.Unlock()
	if own != nil {
		e.env.Sinks.Deliver(*own, false)
		clear(*own)
		*own = (*own)[:0]
		dlPool.Put(own)
		e.dq.handOff()
		if e.FlushReplies() {
			e.env.Sinks.Answered() // the reader delivering this batch replied
		}
	}
	return true
}

// dlPool recycles the delivery lists readers take out of the engine.
var dlPool = sync.Pool{New: func() any { return new([]Delivery) }}
