package engine

import (
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// drainPublishes handles queued publish requests so that small events share
// datagrams under load, without waiting when the queue is empty.
func (e *Engine) drainPublishes(now time.Time) {
	bytes := 0
	for i := 0; i < maxDrain && bytes < maxDrainBytes && len(e.blocked) == 0; i++ {
		if e.next == len(e.batch) {
			e.batch, e.next = e.pubs.take(e.batch[:0]), 0
			if len(e.batch) == 0 {
				return
			}
		}
		p := e.batch[e.next]
		e.batch[e.next] = Request{} // the batch's memory goes back to the queue
		e.next++
		e.publish(p, now)
		e.pubsPending.Add(-1)
		bytes += p.Size
	}
}

// idle reports whether no publish and no receive batch is waiting for the
// engine.
func (e *Engine) idle() bool { return e.pubsPending.Load() == 0 && e.rxPending.Load() == 0 }

// publishesReady returns the channel that wakes Run for publishes: nil
// while flow control holds them back. When publishes are left over from
// the last drain, taken or still queued, it makes sure the channel is
// ready, as a drain that stopped early (maxDrain, flow control) has no
// push behind it to signal.
func (e *Engine) publishesReady() chan struct{} {
	if len(e.blocked) > 0 {
		return nil // flow control: take no publishes until ACKs arrive
	}
	if e.next < len(e.batch) || e.pubs.len() > 0 {
		e.pubs.signal()
	}
	return e.pubs.ready
}

// tick drives every machine's timers. It reports whether any had
// something to do (a sender due, a datagram, a delivery or a loss to
// report), so that wake-ups for nothing are counted.
func (e *Engine) tick(now time.Time) bool {
	ticked := e.tickSenders(now)
	e.rcv.Tick(now, &e.out)
	e.sendAcks(now, false)
	e.recheckBlocked(now)
	e.asmRel.Prune(now)
	e.asmUnrel.Prune(now)
	e.countAssemblyDrops(now)
	e.expireSenders(now)
	return ticked || len(e.out.Datagrams)+len(e.out.Deliveries)+len(e.out.Losses) > 0
}

// flush packs pending records, transmits what the machines produced,
// delivers what they released and re-arms the timer.
func (e *Engine) flush(now time.Time) {
	e.packPending(now)
	e.sendAcks(now, false)
	e.handleOutput(now)
	e.publishStats(now)
	e.rearm(now)
}

// handleOutput acts on e.out: collects the deliveries (made after the
// section, see Queue), transmits the datagrams, collects the loss
// reports and, transmission done, reclaims the released datagrams' pooled
// buffers.
func (e *Engine) handleOutput(now time.Time) {
	for len(e.out.Datagrams) > 0 || len(e.out.Deliveries) > 0 || len(e.out.Losses) > 0 || len(e.out.Released) > 0 {
		for _, d := range e.out.Deliveries {
			e.deliverRecords(d, now)
		}
		e.transmit(e.out.Datagrams)
		for _, d := range e.out.Datagrams {
			if d.Kind == datagram.KindAck {
				e.free.put(d) // the engine's own (sendAcks): transmitted, held by nothing
			}
		}
		for _, l := range e.out.Losses {
			e.dl = append(e.dl, Delivery{Kind: DeliverLoss, Loss: &l})
		}
		// Transmitted: what the senders let go may now be reused.
		for _, d := range e.out.Released {
			e.frags.release(d)
			e.free.put(d)
		}
		e.out.Reset()
	}
}

// rearm sets the timer to the earliest deadline of any machine.
func (e *Engine) rearm(now time.Time) {
	next := now.Add(time.Second)
	consider := func(t time.Time) {
		if !t.IsZero() && t.Before(next) {
			next = t
		}
	}
	consider(e.senderDue())
	consider(e.rcv.NextDeadline())
	if e.ackDirty {
		consider(now.Add(ackInterval))
	}
	if len(e.blocked) > 0 {
		consider(now.Add(ackTimeout / 4))
	}
	if t, ok := e.asmRel.NextDeadline(); ok {
		consider(t)
	}
	if t, ok := e.asmUnrel.NextDeadline(); ok {
		consider(t)
	}
	if !e.timer.Stop() {
		select {
		case <-e.timer.C:
		default:
		}
	}
	e.timer.Reset(max(next.Sub(now), 0))
}
