package bridge

import (
	"context"
	"errors"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/cloudevent"
)

// runOut runs the outbound route until ctx ends: it reads a batch from the
// reader, converts it and sends it, one batch in flight, so events keep
// the order the bus delivered them in.
func (b *Bridge) runOut(ctx context.Context) {
	o := &outbound{b: b}
	defer o.close()
	if !o.connect(ctx) {
		return
	}
	batch := make([]*cloudevent.Event, 0, b.cfg.BatchSize)
	for {
		rctx, cancel := context.WithTimeout(ctx, ProbeEvery)
		ev, err := b.rd.Read(rctx)
		cancel()
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			o.probe(ctx)
			continue
		}
		if err != nil {
			return // ctx ended, or the reader closed
		}
		batch = b.convert(ctx, batch[:0], ev)
		for len(batch) < b.cfg.BatchSize && b.rd.Stats().Pending > 0 {
			if ev, err = b.rd.Read(ctx); err != nil {
				return
			}
			batch = b.convert(ctx, batch, ev)
		}
		b.countQueueDrops(o)
		if len(batch) > 0 && !o.send(ctx, batch) {
			return
		}
	}
}

// convert appends the CloudEvent of ev to batch; an event this bridge
// brought in is dropped (cycle), one without a CloudEvents form is a dead
// letter.
func (b *Bridge) convert(ctx context.Context, batch []*cloudevent.Event, ev *client.Event) []*cloudevent.Event {
	e, err := FromBus(&ev.Event, b.cfg.Name)
	switch {
	case errors.Is(err, ErrCycle):
		b.m.Drops.WithLabelValues(b.cfg.Name, DirOut, string(ReasonCycle)).Inc()
	case err != nil:
		_ = b.deadLetter(ctx, DirOut, ReasonOf(err), err, nil, ev.Data, ev.ID.String())
	default:
		batch = append(batch, e)
	}
	return batch
}

// countQueueDrops adds the reader's new drops to the drop counter.
func (b *Bridge) countQueueDrops(o *outbound) {
	d := b.rd.Stats().Dropped
	if d > o.dropped {
		b.m.Drops.WithLabelValues(b.cfg.Name, DirOut, string(ReasonQueueFull)).Add(float64(d - o.dropped))
		b.logLimited(DirOut, "bridge queue full, events dropped", "dropped", d-o.dropped)
		o.dropped = d
	}
}

// outbound is the outbound route's state, owned by runOut.
type outbound struct {
	b       *Bridge
	s       Sender
	fails   int    // Sends failed in a row
	dropped uint64 // reader drops already counted
}

// close releases the sender.
func (o *outbound) close() {
	if o.s != nil {
		_ = o.s.Close()
	}
}

// send sends batch until the broker acknowledges it, with back-off between
// tries and a new Sender after ReconnectAfter failures in a row; events
// the broker rejects for good are dead letters. It returns false when ctx
// ended first.
func (o *outbound) send(ctx context.Context, batch []*cloudevent.Event) bool {
	b := o.b
	wait := b.cfg.Backoff
	for {
		err := o.trySend(ctx, batch)
		if err == nil {
			o.fails = 0
			b.setUp(DirOut, true, nil)
			b.m.Messages.WithLabelValues(b.cfg.Name, DirOut).Add(float64(len(batch)))
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if errors.Is(err, ErrRejected) {
			return o.sendEach(ctx, batch)
		}
		o.fails++
		b.setUp(DirOut, false, err)
		b.m.Retries.WithLabelValues(b.cfg.Name, DirOut).Inc()
		b.logLimited(DirOut, "bridge send failed, retrying", "address", b.cfg.Out.Address, "in", wait.String(), "err", err)
		if o.fails%ReconnectAfter == 0 && o.s != nil {
			_ = o.s.Close()
			o.s = nil
		}
		if !sleep(ctx, wait) {
			return false
		}
		wait = b.backoff(wait)
	}
}

// connect makes the Sender before the first event, so that the route
// reports whether the broker is there before it has anything to send. It
// returns false when ctx ended first.
func (o *outbound) connect(ctx context.Context) bool {
	b := o.b
	wait := b.cfg.Backoff
	for {
		err := o.sender(ctx)
		if err == nil {
			b.setUp(DirOut, true, nil)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		o.fails++
		b.setUp(DirOut, false, err)
		b.logLimited(DirOut, "bridge cannot reach the broker", "in", wait.String(), "err", err)
		if !sleep(ctx, wait) {
			return false
		}
		wait = b.backoff(wait)
	}
}

// probe checks an idle route's broker: a Sender that fails its Probe is
// closed and the route reported down; a missing Sender is made again.
func (o *outbound) probe(ctx context.Context) {
	b := o.b
	if o.s == nil {
		if err := o.sender(ctx); err != nil {
			b.setUp(DirOut, false, err)
			return
		}
		o.fails = 0
		b.setUp(DirOut, true, nil)
		return
	}
	p, ok := o.s.(Prober)
	if !ok {
		return
	}
	if err := p.Probe(ctx); err != nil && ctx.Err() == nil {
		o.fails++
		b.setUp(DirOut, false, err)
		b.logLimited(DirOut, "bridge broker does not answer", "err", err)
		_ = o.s.Close()
		o.s = nil
	}
}

// trySend sends batch once, making the Sender first when there is none.
func (o *outbound) trySend(ctx context.Context, batch []*cloudevent.Event) error {
	if err := o.sender(ctx); err != nil {
		return err
	}
	return o.s.Send(ctx, batch)
}

// sender makes the Sender when there is none; one made after failures
// counts as a reconnect.
func (o *outbound) sender(ctx context.Context) error {
	if o.s != nil {
		return nil
	}
	s, err := o.b.broker.NewSender(ctx, o.b.cfg.Out.Address)
	if err != nil {
		return err
	}
	if o.fails > 0 {
		o.b.m.Reconnects.WithLabelValues(o.b.cfg.Name, DirOut).Inc()
	}
	o.s = s
	return nil
}

// sendEach sends the events of a batch the broker rejected one at a time:
// the rejected ones go to the dead letters, the others are sent until
// acknowledged.
func (o *outbound) sendEach(ctx context.Context, batch []*cloudevent.Event) bool {
	for _, e := range batch {
		err := o.trySend(ctx, []*cloudevent.Event{e})
		switch {
		case err == nil:
			o.b.m.Messages.WithLabelValues(o.b.cfg.Name, DirOut).Inc()
		case errors.Is(err, ErrRejected):
			_ = o.b.deadLetter(ctx, DirOut, ReasonRejected, err, e, e.Data, e.ID)
		default:
			if !o.send(ctx, []*cloudevent.Event{e}) {
				return false
			}
		}
	}
	return true
}
