package engine

import (
	"context"
	"time"

	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/transport/datagram"
)

// Submit hands a publish request to the engine: on the caller's goroutine
// when it is idle (direct), else through its queue, waiting while the
// queue is full unless ctx ends or the engine stops (ErrStopped).
func (e *Engine) Submit(ctx context.Context, p Request) error {
	if e.direct(p) {
		return nil
	}
	e.pubsPending.Add(1)
	for {
		ok, room := e.pubs.push(p)
		if ok {
			return nil
		}
		select {
		case <-room:
		case <-ctx.Done():
			e.pubsPending.Add(-1)
			return ctx.Err()
		case <-e.stop:
			e.pubsPending.Add(-1)
			e.m.Drop(metrics.DropClosed)
			return ErrStopped
		}
	}
}

// Receive takes a batch of datagrams a UDP reader received, which lie in
// its buffer: it handles them on the caller's goroutine when the engine is
// idle, else copies them into one slab and queues it for the engine
// goroutine (dropping the batch, counted, when the queue is full).
func (e *Engine) Receive(pkts []Packet) {
	if len(pkts) == 0 || e.directReceive(rxBatch{pkts: pkts}) {
		return
	}
	total := 0
	for _, p := range pkts {
		total += len(p.Data)
	}
	if e.rxBytes.Add(int64(total)) > int64(e.cfg.ReceiveQueueBytes) && e.rxPending.Load() > 0 {
		// The queued batches hold their bound (an empty queue takes any
		// one batch): reliable streams repair what is dropped here.
		e.rxBytes.Add(-int64(total))
		e.m.DropN(metrics.DropQueueFull, uint64(len(pkts)))
		return
	}
	slab := make([]byte, 0, total)
	b := rxBatch{pkts: make([]Packet, len(pkts)), bytes: total}
	for i, p := range pkts {
		start := len(slab)
		slab = append(slab, p.Data...)
		b.pkts[i] = Packet{Data: slab[start:len(slab):len(slab)], From: p.From}
	}
	e.rxPending.Add(1)
	select {
	case e.rxCh <- b:
		e.paths.rxQueued.Add(1)
	default:
		e.rxPending.Add(-1)
		e.rxBytes.Add(-int64(total))
		e.m.DropN(metrics.DropQueueFull, uint64(len(b.pkts)))
	}
}

// Forget frees every stream of a departed sender instance, on the engine
// goroutine. It returns once the request is queued or the engine stopped.
func (e *Engine) Forget(inst datagram.InstanceID) {
	select {
	case e.ctlCh <- func(e *Engine) { e.forget(inst, time.Now()) }:
	case <-e.stop:
	}
}

// Flush gives reliable streams up to d to finish: it waits until the
// engine has sent nothing and heard no NACK for flushQuiet (so the final
// heartbeats went out and receivers had their chance to ask for repairs).
// The engine goroutine must be running.
func (e *Engine) Flush(d time.Duration) {
	deadline := time.Now().Add(d)
	for {
		quiet := make(chan bool, 1)
		select {
		case e.ctlCh <- func(e *Engine) {
			e.packPending(time.Now())
			quiet <- time.Since(e.lastActive) >= flushQuiet
		}:
		case <-time.After(time.Until(deadline)):
			return
		}
		select {
		case q := <-quiet:
			if q || !time.Now().Before(deadline) {
				return
			}
		case <-time.After(time.Until(deadline)):
			return
		}
		t := time.NewTimer(flushQuiet / 4)
		<-t.C
	}
}
