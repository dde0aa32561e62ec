package bridge

import (
	"context"
	"errors"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/scope"
)

// runIn runs the inbound route until ctx ends: it makes a Receiver of
// In.Address and runs it, and after a failure waits with back-off and
// makes a new one.
func (b *Bridge) runIn(ctx context.Context) {
	wait := b.cfg.Backoff
	for ctx.Err() == nil {
		r, err := b.broker.NewReceiver(ctx, b.cfg.In.Address)
		if err == nil {
			b.setUp(DirIn, true, nil)
			started := time.Now()
			err = r.Receive(ctx, b.deliver)
			_ = r.Close()
			if time.Since(started) > b.cfg.MaxBackoff {
				wait = b.cfg.Backoff // it ran for a while: a fresh failure
			}
		}
		if ctx.Err() != nil {
			return
		}
		b.setUp(DirIn, false, err)
		b.m.Reconnects.WithLabelValues(b.cfg.Name, DirIn).Inc()
		b.log.Warn("bridge receiver failed, starting again", "direction", DirIn, "address", b.cfg.In.Address, "in", wait.String(), "err", err)
		if !sleep(ctx, wait) {
			return
		}
		wait = b.backoff(wait)
	}
}

// deliver publishes what a Receiver read on the inbound scope, or sends a
// message that did not convert to the dead letters. It returns once the
// bus took the event; an error leaves the message unacknowledged.
func (b *Bridge) deliver(ctx context.Context, m Message) error {
	if m.Event == nil {
		return b.deadLetter(ctx, DirIn, m.Reason, m.Err, nil, m.Payload, m.Position)
	}
	ev, err := ToBus(m.Event, scope.MustParse(b.cfg.In.Scope), b.cfg.Name)
	if err != nil {
		return b.deadLetter(ctx, DirIn, ReasonOf(err), err, m.Event, m.Payload, m.Position)
	}
	if ev.WireSchema == "" && len(ev.Data) > 0 {
		// CloudEvents data without a content type is JSON.
		ev.WireSchema = ContentJSON
	}
	if err := b.inf.PublishEvent(ctx, &client.Event{Event: *ev}); err != nil {
		if ctx.Err() != nil || errors.Is(err, client.ErrClosed) || errors.Is(err, client.ErrDisconnected) ||
			errors.Is(err, client.ErrTimeout) {
			return err // the bus is away: the message stays unacknowledged
		}
		// The bus refuses this event for good: retrying would stall the
		// bridge on it.
		return b.deadLetter(ctx, DirIn, ReasonUnmappable, err, m.Event, m.Payload, m.Position)
	}
	b.m.Messages.WithLabelValues(b.cfg.Name, DirIn).Inc()
	return nil
}
