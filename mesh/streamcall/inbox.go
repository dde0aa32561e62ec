package streamcall

import (
	"sync"
	"time"
)

// arrival is a chunk and when it arrived.
type arrival struct {
	c  Chunk
	at time.Time
}

// inbox is a Stream's queue of arrived chunks: the Caller's listener puts,
// the Stream's reader takes all at once. It holds at most DefaultQueueLen
// chunks; one more marks it overflowed. Its memory grows with what waits,
// so a call costs little until chunks queue up.
type inbox struct {
	mu   sync.Mutex
	q    []arrival
	over bool
	// sig has a token when chunks wait or the inbox overflowed.
	sig chan struct{}
}

func newInbox() *inbox { return &inbox{sig: make(chan struct{}, 1)} }

// put queues a, or marks the inbox overflowed when it is full.
func (in *inbox) put(a arrival) {
	in.mu.Lock()
	if len(in.q) >= DefaultQueueLen {
		in.over = true
	} else {
		in.q = append(in.q, a)
	}
	in.mu.Unlock()
	select {
	case in.sig <- struct{}{}:
	default:
	}
}

// take returns what waits, swapping in spare (emptied) for the next puts,
// and whether the inbox overflowed.
func (in *inbox) take(spare []arrival) ([]arrival, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	q := in.q
	in.q = spare[:0]
	return q, in.over
}
