package streamcall

import (
	"fmt"
	"time"
)

// Chunk is one piece of a streamed answer.
type Chunk struct {
	// Seq numbers the chunk within its call, from 0.
	Seq uint32
	// Done marks the last chunk.
	Done bool
	// Data is the chunk's text (or bytes).
	Data []byte
	// EventType is the optional etype attribute: what kind of piece this
	// is, as the server names it.
	EventType string
	// Err is the err attribute: the server's error, on the last chunk.
	Err string
	// Meta is the meta attribute, a JSON string, when present.
	Meta string
}

// Receiver checks the chunks of one call and hands them over in sequence
// order. It is a pure state machine: no goroutines, no clock (every method
// takes the time), not safe for concurrent use.
type Receiver struct {
	next       uint32
	held       map[uint32]Chunk
	ready      []Chunk // ready[head:] wait for Next
	head       int
	gapSince   time.Time // when the open gap was seen; zero: none
	deadline   time.Time // zero: none
	firstBy    time.Time // the first chunk's deadline; zero: none
	arrived    bool      // a chunk arrived
	gapTimeout time.Duration
	done       bool
	err        error
}

// NewReceiver returns a Receiver for a call ending at deadline (zero: no
// deadline) that declares a gap lost after gapTimeout (0:
// DefaultGapTimeout).
func NewReceiver(deadline time.Time, gapTimeout time.Duration) *Receiver {
	if gapTimeout <= 0 {
		gapTimeout = DefaultGapTimeout
	}
	return &Receiver{deadline: deadline, gapTimeout: gapTimeout, held: make(map[uint32]Chunk)}
}

// Push takes a chunk received at now. Chunks after the last one, or after
// the call failed, are ignored.
func (r *Receiver) Push(c Chunk, now time.Time) {
	if r.done || r.err != nil {
		return
	}
	r.arrived = true
	switch {
	case c.Seq < r.next:
		r.fail(fmt.Errorf("%w: seq %d, expected %d", ErrOutOfOrder, c.Seq, r.next))
	case c.Seq == r.next:
		r.accept(c)
		r.drainHeld(now)
	default:
		if _, dup := r.held[c.Seq]; dup {
			r.fail(fmt.Errorf("%w: seq %d twice", ErrOutOfOrder, c.Seq))
			return
		}
		if len(r.held) >= MaxHeld {
			r.fail(fmt.Errorf("%w: seq %d missing, %d chunks behind it", ErrLost, r.next, len(r.held)))
			return
		}
		r.held[c.Seq] = c
		if r.gapSince.IsZero() {
			r.gapSince = now
		}
	}
	r.Tick(now)
}

// accept queues the next chunk in sequence.
func (r *Receiver) accept(c Chunk) {
	r.ready = append(r.ready, c)
	r.next++
	if c.Done {
		r.done = true
		clear(r.held)
	}
}

// drainHeld moves the held chunks that now follow in sequence to ready,
// and starts the gap clock at now for the gap that remains, if any.
func (r *Receiver) drainHeld(now time.Time) {
	for !r.done {
		c, ok := r.held[r.next]
		if !ok {
			break
		}
		delete(r.held, r.next)
		r.accept(c)
	}
	r.gapSince = time.Time{}
	if len(r.held) > 0 {
		r.gapSince = now
	}
}

// ExpectFirstBy makes a call that has received no chunk at t fail with
// ErrNoAnswer: no server took it.
func (r *Receiver) ExpectFirstBy(t time.Time) { r.firstBy = t }

// Tick advances the clock: a gap open for the gap timeout is a lost chunk,
// and the deadline ends an unfinished call.
func (r *Receiver) Tick(now time.Time) {
	if r.done || r.err != nil {
		return
	}
	if !r.arrived && !r.firstBy.IsZero() && !now.Before(r.firstBy) {
		r.fail(fmt.Errorf("%w: no chunk by the first chunk's deadline", ErrNoAnswer))
		return
	}
	if !r.gapSince.IsZero() && now.Sub(r.gapSince) >= r.gapTimeout {
		r.fail(fmt.Errorf("%w: seq %d missing for %v", ErrLost, r.next, now.Sub(r.gapSince)))
		return
	}
	if !r.deadline.IsZero() && !now.Before(r.deadline) {
		r.fail(fmt.Errorf("%w: %d chunks received", ErrDeadline, r.next))
	}
}

// fail ends the call with err once the chunks already in order are taken.
func (r *Receiver) fail(err error) {
	r.err = err
	clear(r.held)
}

// Next returns the next chunk in order, if one is ready.
func (r *Receiver) Next() (Chunk, bool) {
	if r.head == len(r.ready) {
		return Chunk{}, false
	}
	c := r.ready[r.head]
	r.ready[r.head] = Chunk{}
	r.head++
	if r.head == len(r.ready) {
		r.ready, r.head = r.ready[:0], 0
	}
	return c, true
}

// Err returns why the call failed, nil while it has not.
func (r *Receiver) Err() error { return r.err }

// Done reports whether the last chunk arrived in order.
func (r *Receiver) Done() bool { return r.done }

// Wake returns when Tick must next be called: when the open gap times out,
// or at the deadline; false when nothing waits on the clock.
func (r *Receiver) Wake() (time.Time, bool) {
	if r.done || r.err != nil {
		return time.Time{}, false
	}
	at, ok := r.deadline, !r.deadline.IsZero()
	if !r.arrived && !r.firstBy.IsZero() && (!ok || r.firstBy.Before(at)) {
		at, ok = r.firstBy, true
	}
	if !r.gapSince.IsZero() {
		if g := r.gapSince.Add(r.gapTimeout); !ok || g.Before(at) {
			at, ok = g, true
		}
	}
	return at, ok
}
