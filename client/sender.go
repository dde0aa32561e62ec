package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rsbd/rsbd/rsbsocket"
)

// sender writes a socket link's frames on a goroutine of its own: a
// publisher queues its frame and returns, and the goroutine writes what was
// queued meanwhile in one system call (SendMany). A publisher in a loop
// thus costs a system call per batch instead of per event; a lone event
// waits for no one (the goroutine runs as soon as the publisher blocks or
// another CPU is free), and in measurements it made round trips no slower.
//
// The queue holds at most sendQueueBytes, each frame charged its body and
// rsbsocket.FrameOverhead (a larger frame alone): past it a publisher waits
// for room, or for its context. The charge per frame bounds the queue's
// list of frames too, however small the frames. A failed write ends the
// sender: the frames it held are counted as unsent and every later send
// fails. The goroutine ends after sendIdle without frames; the next frame
// starts another.
type sender struct {
	conn frameWriter
	// onFail is told the write error that ended the sender, once.
	onFail func(error)

	mu      sync.Mutex
	pending [][]byte
	bytes   int           // the charge of pending: body bytes plus rsbsocket.FrameOverhead each
	writing bool          // the goroutine is writing a batch
	running bool          // the goroutine is started and has not ended
	room    chan struct{} // while publishers wait: closed when there is room
	drained chan struct{} // while flush waits: closed when nothing is queued or being written
	wake    chan struct{} // buffered 1: pending has frames for the goroutine
	err     error         // why the sender ended: a write error, or closing
	unsent  uint64        // frames accepted and never written
	done    chan struct{} // closed when the goroutine has ended
}

// frameWriter writes socket frames: an *rsbsocket.ClientConn.
type frameWriter interface {
	SendMany(bodies [][]byte) error
}

func newSender(conn frameWriter, onFail func(error)) *sender {
	return &sender{conn: conn, onFail: onFail, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// send queues body as one frame, behind the frames before it. While the
// queue is full it waits for room or ctx.
func (s *sender) send(ctx context.Context, body []byte) error {
	s.mu.Lock()
	charge := len(body) + rsbsocket.FrameOverhead
	for s.err == nil && s.bytes > 0 && s.bytes+charge > sendQueueBytes {
		if s.room == nil {
			s.room = make(chan struct{})
		}
		room := s.room
		s.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return fmt.Errorf("client: publish: waiting for the connection: %w", ctx.Err())
		}
		s.mu.Lock()
	}
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	s.pending = append(s.pending, body)
	s.bytes += charge
	if !s.writing { // a writing goroutine looks again once it is done
		s.kickLocked()
	}
	s.mu.Unlock()
	return nil
}

// kickLocked has the goroutine write the pending frames, starting it if
// it is not running.
func (s *sender) kickLocked() {
	if !s.running {
		s.running = true
		s.done = make(chan struct{})
		go s.run(s.done)
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run writes the queued frames in batches until the queue stays empty
// for sendIdle, or the sender ends.
func (s *sender) run(done chan struct{}) {
	defer close(done)
	idle := time.NewTimer(sendIdle)
	defer idle.Stop()
	var batch [][]byte
	for {
		select {
		case <-s.wake:
		case <-idle.C:
			if s.endIfIdle() {
				return
			}
		}
		var ok bool
		if batch, ok = s.writeQueued(batch); !ok {
			return
		}
		idle.Reset(sendIdle)
	}
}

// endIfIdle marks the goroutine ended if nothing is queued.
func (s *sender) endIfIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) > 0 {
		return false
	}
	s.running = false
	return true
}

// writeQueued writes the queued frames, a batch at a time, until the queue
// is empty; batch is its spare slice. It reports false, the goroutine
// marked ended, once the sender has ended.
func (s *sender) writeQueued(batch [][]byte) ([][]byte, bool) {
	for {
		s.mu.Lock()
		if s.err != nil {
			s.running = false
			s.mu.Unlock()
			return batch, false
		}
		if len(s.pending) == 0 {
			s.mu.Unlock()
			return batch, true
		}
		batch, s.pending = s.pending, batch[:0]
		s.writing = true
		s.mu.Unlock()
		err := s.conn.SendMany(batch)
		s.mu.Lock()
		s.writing = false
		s.releaseLocked(batch)
		if err != nil {
			s.unsent += uint64(len(batch))
			s.failLocked(err)
		}
		s.noteIdleLocked()
		s.mu.Unlock()
		clear(batch)
	}
}

// releaseLocked takes the written (or lost) batch out of the bound and lets
// waiting publishers retry.
func (s *sender) releaseLocked(batch [][]byte) {
	for _, b := range batch {
		s.bytes -= len(b) + rsbsocket.FrameOverhead
	}
	if s.room != nil {
		close(s.room)
		s.room = nil
	}
}

// noteIdleLocked tells a waiting flush once nothing is queued or being
// written.
func (s *sender) noteIdleLocked() {
	if s.drained != nil && len(s.pending) == 0 && !s.writing {
		close(s.drained)
		s.drained = nil
	}
}

// failLocked ends the sender after a write error: the pending frames are
// unsent, waiting publishers and later sends fail.
func (s *sender) failLocked(err error) {
	if s.err != nil {
		return
	}
	s.err = s.wrap(err)
	s.unsent += uint64(len(s.pending))
	s.releaseLocked(s.pending)
	clear(s.pending)
	s.pending = s.pending[:0]
	s.noteIdleLocked()
	s.onFail(err)
}

// wrap turns a write error into the error a publisher gets.
func (s *sender) wrap(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rsbsocket.ErrClosed):
		return fmt.Errorf("%w: %w", ErrClosed, err)
	default:
		return fmt.Errorf("%w: %w", ErrDisconnected, err)
	}
}

// flush waits until the frames queued so far are written (nil), the
// sender ended (its error) or ctx is done (its error).
func (s *sender) flush(ctx context.Context) error {
	s.mu.Lock()
	if s.err != nil || (len(s.pending) == 0 && !s.writing) {
		err := s.err
		s.mu.Unlock()
		return err
	}
	if s.drained == nil {
		s.drained = make(chan struct{})
	}
	drained := s.drained
	s.mu.Unlock()
	select {
	case <-drained:
	case <-ctx.Done():
		return ctxError(ctx)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// close ends the sender once the connection is closed: what is still
// queued is unsent, and later sends fail with ErrClosed.
func (s *sender) close() {
	s.mu.Lock()
	if s.err == nil {
		s.err = fmt.Errorf("%w: the bus is closed", ErrClosed)
		s.unsent += uint64(len(s.pending))
		s.releaseLocked(s.pending)
		clear(s.pending)
		s.pending = s.pending[:0]
		s.noteIdleLocked()
	}
	running, done := s.running, s.done
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	if running {
		<-done
	}
}

// unsentFrames returns the frames accepted and never written.
func (s *sender) unsentFrames() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unsent
}
