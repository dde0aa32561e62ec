package streamcall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/mesh/frame"
)

// Stream is the receiving end of one call. Its chunks are read with Recv
// (or Chunks) by one goroutine.
type Stream struct {
	c   *Caller
	sid string
	in  *inbox
	// spare is the taken batch's memory, for the inbox's next one.
	spare []arrival
	m     *Receiver
	ctx   context.Context
	// stop cancels ctx; stopAfter unregisters the cancellation of the call
	// at the server when the caller's ctx ends.
	stop, stopAfter func()
	// settled is set once the server needs no cancel: the last chunk
	// arrived, or the cancel was sent.
	settled atomic.Bool
	endOnce sync.Once
	owned   bool
	err     error
	// timer wakes wait for the Receiver's next deadline; made once.
	timer    *time.Timer
	deadline time.Time
}

// Session returns the call's session id.
func (s *Stream) Session() string { return s.sid }

// Recv returns the next chunk in sequence order. After the last chunk it
// returns io.EOF; a last chunk carrying an error is returned with a
// *RemoteError. A lost, out-of-order or late chunk, the deadline, an
// overflow or ctx's cancellation end the call with an error (and cancel it
// at the server).
func (s *Stream) Recv() (Chunk, error) {
	for {
		if s.err != nil {
			return Chunk{}, s.err
		}
		if c, ok := s.m.Next(); ok {
			if c.Done {
				s.err = io.EOF
				s.settled.Store(true)
				s.end()
				if c.Err != "" {
					s.err = &RemoteError{Message: c.Err}
					return c, s.err
				}
			}
			return c, nil
		}
		if err := s.m.Err(); err != nil {
			s.err = err
			s.abort()
			continue
		}
		s.wait()
	}
}

// wait waits for the next arrival, the Receiver's next wake-up, an
// overflow or the end of the call's context, and feeds it to the Receiver.
func (s *Stream) wait() {
	var timer <-chan time.Time
	// The call's context ends at the deadline; a timer is armed only for
	// an earlier wake-up (an open gap), as chunks in order need none.
	if at, ok := s.m.Wake(); ok && at.Before(s.deadline) {
		if s.timer == nil {
			s.timer = time.NewTimer(time.Until(at))
		} else {
			s.timer.Reset(time.Until(at))
		}
		defer s.timer.Stop()
		timer = s.timer.C
	}
	select {
	case <-s.in.sig:
		batch, over := s.in.take(s.spare)
		for i := range batch {
			s.m.Push(batch[i].c, batch[i].at)
			batch[i] = arrival{}
		}
		s.spare = batch
		if over && s.m.Err() == nil {
			s.m.fail(fmt.Errorf("%w: %d chunks queued", ErrOverflow, DefaultQueueLen))
		}
	case <-timer:
		s.m.Tick(time.Now())
	case <-s.ctx.Done():
		s.m.Tick(time.Now())
		if s.m.Err() == nil {
			if errors.Is(s.ctx.Err(), context.DeadlineExceeded) {
				s.m.fail(fmt.Errorf("%w: %d chunks received", ErrDeadline, s.m.next))
			} else {
				s.m.fail(fmt.Errorf("streamcall: %w", context.Cause(s.ctx)))
			}
		}
	}
}

// Chunks returns an iterator over the chunks; it ends after the last one,
// or with one error.
func (s *Stream) Chunks() iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		for {
			c, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(c, err) || err != nil {
				return
			}
		}
	}
}

// Close ends the stream; a call not yet finished is cancelled at the
// server. It is idempotent.
func (s *Stream) Close() error {
	if s.err == nil {
		s.err = ErrClosed
	}
	s.abort()
	return nil
}

// abort ends the stream and, unless it finished, tells the server to
// cancel the call.
func (s *Stream) abort() {
	s.cancelRemote()
	s.end()
}

// cancelRemote sends the cancel frame of the call, once, unless the call
// finished.
func (s *Stream) cancelRemote() {
	if s.settled.Swap(true) {
		return
	}
	c := Chunk{Done: true, Err: cancelledMsg}
	b, err := frame.Marshal(chunkFrame(s.sid, &c))
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.c.publish(ctx, b)
}

// end releases the stream: the Caller forgets it, its context ends, and a
// Caller of its own closes.
func (s *Stream) end() {
	s.endOnce.Do(func() {
		if s.stopAfter != nil {
			s.stopAfter()
		}
		s.c.forget(s.sid)
		s.stop()
		if s.owned {
			_ = s.c.Close()
		}
	})
}
