package engine

import (
	"runtime"
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
	if !e.idle() {
		// A burst is queued (the engine stamps lastPublish as it takes
		// them): this publish joins it without reading the clock.
		return false
	}
	now := time.Now()
	prev := time.Unix(0, e.lastPublish.Swap(now.UnixNano()))
	reply := e.dq.busy.Load()
	if (!reply && now.Sub(prev) < directGap) || !e.lockSoon(now) {
		return false
	}
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

// lockSoon takes mu if it comes free within directSpin. It never blocks
// for long: a section never waits for a delivery, so mu is held briefly.
func (e *Engine) lockSoon(start time.Time) bool {
	for {
		if e.mu.TryLock() {
			return true
		}
		if time.Since(start) > directSpin {
			return false
		}
		runtime.Gosched()
	}
}

// directReceive handles b on the caller's (socket reader's) goroutine when
// the engine is idle and nothing is queued. It reports whether it did.
// b's datagrams lie in the reader's buffer: the deliveries they release are
// made before directReceive returns, by this goroutine when no other one
// delivers, else they are copied and queued.
func (e *Engine) directReceive(b rxBatch) bool {
	if !e.idle() || !e.lockSoon(time.Now()) {
		return false
	}
	if !e.idle() {
		e.mu.Unlock()
		return false
	}
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
