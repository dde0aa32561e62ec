package bridge

import (
	"context"
	"maps"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/scope"
)

// deadSeq numbers the dead letters that have no broker position, for
// their ids.
var deadSeq atomic.Uint64

// deadLetter deals with a message of direction dir that cannot cross the
// bridge: it goes to the dead-letter destination with its reason, or is
// dropped; either way it is counted and logged. e is the event when there
// is one, else payload is what the message carried. It returns an error
// only when ctx ended, so a dead letter never stalls the bridge.
func (b *Bridge) deadLetter(ctx context.Context, dir string, reason Reason, cause error, e *cloudevent.Event, payload []byte, pos string) error {
	name := b.cfg.Name
	if b.cfg.DeadLetter == "" {
		b.m.Drops.WithLabelValues(name, dir, string(reason)).Inc()
		b.logLimited(dir, "bridge message dropped", "reason", reason, "position", pos, "err", cause)
		return nil
	}
	dl := b.deadEvent(dir, reason, e, payload, pos)
	var err error
	if sc, addr := b.cfg.deadLetterTarget(); sc != "" {
		err = b.deadToBus(ctx, dl, sc)
	} else {
		err = b.deadToBroker(ctx, dl, addr)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		b.m.Drops.WithLabelValues(name, dir, string(ReasonDeadLetterFailed)).Inc()
		b.logLimited(dir, "bridge dead letter lost", "reason", reason, "position", pos, "err", err, "cause", cause)
		return nil
	}
	b.m.DeadLetters.WithLabelValues(name, dir, string(reason)).Inc()
	b.logLimited(dir, "bridge message sent to the dead letters", "reason", reason, "position", pos, "to", b.cfg.DeadLetter, "err", cause)
	return nil
}

// deadEvent returns the dead letter: e with the reason, or the fallback
// event of the payload with the reason.
func (b *Bridge) deadEvent(dir string, reason Reason, e *cloudevent.Event, payload []byte, pos string) *cloudevent.Event {
	var dl *cloudevent.Event
	if e != nil {
		c := *e
		c.Extensions = maps.Clone(e.Extensions)
		dl = &c
	} else {
		addr := b.cfg.In.Address
		if dir == DirOut {
			addr = b.cfg.Out.Address
		}
		dl = Fallback(b.cfg.Kind, addr, pos, time.Now(), "", payload)
		if dl.Validate() != nil {
			dl.ID = "deadletter-" + strconv.FormatUint(deadSeq.Add(1), 10)
			dl.Source = "/" + b.cfg.Kind + "/" + b.cfg.Name
		}
		if len(payload) > cloudevent.MaxDataBytes {
			dl.Data = payload[:cloudevent.MaxDataBytes]
		}
	}
	SetBrokerExt(dl, ExtDeadLetterReason, string(reason))
	return dl
}

// deadToBus publishes a dead letter on the dead-letter scope sc, with
// this bridge's marker so that it does not leave again through it.
func (b *Bridge) deadToBus(ctx context.Context, dl *cloudevent.Event, sc string) error {
	ev, err := ToBus(dl, scope.MustParse(sc), b.cfg.Name)
	if err != nil {
		return err
	}
	if ev.WireSchema == "" && len(ev.Data) > 0 {
		ev.WireSchema = ContentBytes
	}
	return b.dlInf.PublishEvent(ctx, &client.Event{Event: *ev})
}

// deadToBroker sends a dead letter to the broker's dead-letter address,
// DeadLetterAttempts times at most.
func (b *Bridge) deadToBroker(ctx context.Context, dl *cloudevent.Event, address string) error {
	b.dlMu.Lock()
	defer b.dlMu.Unlock()
	var err error
	wait := b.cfg.Backoff
	for range DeadLetterAttempts {
		if b.dlSender == nil {
			b.dlSender, err = b.broker.NewSender(ctx, address)
		}
		if err == nil {
			if err = b.dlSender.Send(ctx, []*cloudevent.Event{dl}); err == nil {
				return nil
			}
		}
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
		wait = b.backoff(wait)
	}
	return err
}
