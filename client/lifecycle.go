package client

import (
	"context"
	"sync"
)

// lifecycle opens and closes a receiving participant in a fixed order:
// registered with the Bus (so Bus.Close reaches it), attached to the link,
// announced; closed in reverse. It tolerates Bus.Close racing with open.
type lifecycle struct {
	mu      sync.Mutex
	bus     *Bus
	info    partInfo
	closed  bool
	detach  func()
	untrack func()
	stop    func() // the participant's own shutdown (close its queue)
	ended   chan struct{}
}

// done returns a channel closed when the participant closes.
func (lc *lifecycle) done() <-chan struct{} { return lc.ended }

// open registers, attaches s and announces info. On error everything done
// so far is undone.
func (lc *lifecycle) open(b *Bus, s interface {
	sink
	participant() partInfo
}, stop func()) error {
	lc.bus, lc.info, lc.stop = b, s.participant(), stop
	lc.ended = make(chan struct{})
	untrack, err := b.track(lc.closeFromBus)
	if err != nil {
		lc.closed = true
		close(lc.ended)
		stop()
		return err
	}
	lc.mu.Lock()
	lc.untrack = untrack
	if lc.closed {
		lc.mu.Unlock()
		return ErrClosed
	}
	lc.detach = b.link.attach(s)
	lc.mu.Unlock()
	if err := b.announce(context.Background(), lc.info); err != nil {
		lc.close()
		return err
	}
	return nil
}

// close detaches, stops and retires the participant. Idempotent.
func (lc *lifecycle) close() { lc.shutdown(true) }

// closeFromBus is close as Bus.Close calls it (the Bus forgets it itself).
func (lc *lifecycle) closeFromBus() { lc.shutdown(false) }

func (lc *lifecycle) shutdown(untrack bool) {
	lc.mu.Lock()
	if lc.closed {
		lc.mu.Unlock()
		return
	}
	lc.closed = true
	close(lc.ended)
	detach, untrackFn := lc.detach, lc.untrack
	lc.mu.Unlock()
	if detach != nil {
		detach()
	}
	lc.stop()
	if untrack && untrackFn != nil {
		untrackFn()
	}
	lc.bus.retire(lc.info)
}
