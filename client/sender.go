package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
)

// sender writes a socket link's frames on a goroutine of its own: a
// publisher queues its frame and returns, and the goroutine writes what was
// queued meanwhile in one system call (SendMany). A publisher in a loop
// thus costs a system call per batch instead of per event.
//
// A lone frame (nothing queued, being written or owed, and no publish in
// the last inlineGapMicros) is offered to the socket by its publisher
// itself (TrySend, which never blocks): a request, a reply or a ping then
// costs no hand-off to the writer goroutine, which on a loaded host woke
// on the other CPU and took tens of microseconds. What the socket does not
// take at once is queued, or, for the rest of a frame it began, owed: the
// goroutine writes it before anything else.
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

	bufs *bufPool // large frames' buffers, given back once written

	mu      sync.Mutex
	pending [][]byte
	pooled  []bool        // pending[i] is a buffer of bufs
	owed    []byte        // a frame the connection began (TrySend) and owes the rest of
	owedBuf bool          // owed is a buffer of bufs
	bytes   int           // the charge of pending, owed and what is being written: body bytes plus rsbsocket.FrameOverhead each
	writing bool          // the goroutine is writing a batch
	running bool          // the goroutine is started and has not ended
	room    chan struct{} // while publishers wait: closed when there is room
	drained chan struct{} // while flush waits: closed when nothing is queued or being written
	wake    chan struct{} // buffered 1: pending has frames for the goroutine
	err     error         // why the sender ended: a write error, or closing
	unsent  uint64        // frames accepted and never written
	done    chan struct{} // closed when the goroutine has ended
	lastAt  int64         // µs: the publish time of the last frame sent
	arena   []byte        // small frames are encoded into its free end (carve)
}

// frameWriter writes socket frames: an *rsbsocket.ClientConn.
type frameWriter interface {
	// SendMany writes the frames of bodies, after the rest of a frame
	// TrySend owes.
	SendMany(bodies [][]byte) error
	// TrySend writes the frame of body as far as the socket takes it
	// without waiting (see rsbsocket.ClientConn.TrySend).
	TrySend(body []byte) (taken, owes bool, err error)
}

func newSender(conn frameWriter, onFail func(error)) *sender {
	return &sender{conn: conn, onFail: onFail, bufs: newBufPool(sendBufPoolBytes), wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// sendEvent encodes ev and sends its frame as send does: an encoding of
// up to sendArenaFrame bytes straight into the sender's arena, a larger
// one into a buffer of the sender's pool, which takes it back once the
// frame is written.
func (s *sender) sendEvent(ctx context.Context, ev *notification.Event, at int64) error {
	if err := notification.CheckEncodable(ev); err != nil {
		return fmt.Errorf("client: publish: %w", err)
	}
	n := notification.NotificationSize(ev)
	if n > sendArenaFrame {
		buf, pooled := s.bufs.get(n)
		body := notification.AppendNotificationSized(buf, ev, n)
		if err := s.lockRoom(ctx, n); err != nil {
			return err
		}
		return s.sendLocked(body, at, pooled)
	}
	if err := s.lockRoom(ctx, n); err != nil {
		return err
	}
	return s.sendLocked(s.carve(n, ev), at, false)
}

// carve encodes ev, of n bytes, into the arena and returns its encoding.
// The arena is only appended to: frames carved before stay as they are
// while they are written, and a full arena is left to them.
func (s *sender) carve(n int, ev *notification.Event) []byte {
	if cap(s.arena)-len(s.arena) < n {
		s.arena = make([]byte, 0, sendArenaBytes)
	}
	start := len(s.arena)
	s.arena = notification.AppendNotificationSized(s.arena, ev, n)
	return s.arena[start:len(s.arena):len(s.arena)]
}

// send queues body as one frame, behind the frames before it, or writes it
// when it comes alone (see sender); at is its publish time in µs. While the
// queue is full it waits for room or ctx.
func (s *sender) send(ctx context.Context, body []byte, at int64) error {
	if err := s.lockRoom(ctx, len(body)); err != nil {
		return err
	}
	return s.sendLocked(body, at, false)
}

// lockRoom locks s.mu once the queue has room for a frame of n bytes (or
// the sender ended) and returns nil, or returns ctx's error unlocked.
func (s *sender) lockRoom(ctx context.Context, n int) error {
	s.mu.Lock()
	charge := n + rsbsocket.FrameOverhead
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
	return nil
}

// sendLocked queues or offers body (see send), a buffer of s.bufs if
// pooled; it is called with s.mu held and releases it.
func (s *sender) sendLocked(body []byte, at int64, pooled bool) error {
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	charge := len(body) + rsbsocket.FrameOverhead
	alone := !s.writing && len(s.pending) == 0 && s.owed == nil && at-s.lastAt >= inlineGapMicros
	s.lastAt = at
	s.bytes += charge
	if alone {
		return s.offer(body, pooled)
	}
	s.pending = append(s.pending, body)
	s.pooled = append(s.pooled, pooled)
	if !s.writing { // a writer looks again once it is done
		s.kickLocked()
	}
	s.mu.Unlock()
	return nil
}

// offer gives the lone frame body, already charged, to the socket on the
// caller's goroutine; it is called with s.mu held and releases it. Frames
// sent meanwhile queue behind it (writing).
func (s *sender) offer(body []byte, pooled bool) error {
	s.writing = true
	s.mu.Unlock()
	taken, owes, err := s.conn.TrySend(body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writing = false
	switch {
	case err != nil:
		s.uncharge(len(body))
		s.unsent++
		s.failLocked(err)
		return s.err
	case !taken:
		s.pending = slices.Insert(s.pending, 0, body)
		s.pooled = slices.Insert(s.pooled, 0, pooled)
	case owes:
		s.owed, s.owedBuf = body, pooled
	default:
		s.uncharge(len(body))
		s.giveBuf(body, pooled)
	}
	if len(s.pending) > 0 || s.owed != nil {
		s.kickLocked()
	}
	s.noteIdleLocked()
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
	if !s.idleLocked() {
		return false
	}
	s.running = false
	return true
}

// writeQueued writes the queued frames, a batch at a time, until the queue
// is empty; batch is its spare slice. It reports false, the goroutine
// marked ended, once the sender has ended.
func (s *sender) writeQueued(batch [][]byte) ([][]byte, bool) {
	var pooled []bool
	for {
		s.mu.Lock()
		if s.err != nil {
			s.running = false
			s.mu.Unlock()
			return batch, false
		}
		if s.writing || (len(s.pending) == 0 && s.owed == nil) {
			// Nothing to write, or a publisher offers its frame: it
			// kicks the goroutine again if it leaves any.
			s.mu.Unlock()
			return batch, true
		}
		batch, s.pending = s.pending, batch[:0]
		pooled, s.pooled = s.pooled, pooled[:0]
		owed, owedBuf := s.owed, s.owedBuf
		s.owed, s.owedBuf = nil, false
		s.writing = true
		s.mu.Unlock()
		err := s.conn.SendMany(batch) // finishes owed first
		s.mu.Lock()
		s.writing = false
		s.releaseLocked(batch)
		if owed != nil {
			s.uncharge(len(owed))
		}
		if err != nil {
			s.unsent += uint64(len(batch))
			if owed != nil {
				s.unsent++
			}
			s.failLocked(err)
		}
		s.noteIdleLocked()
		s.mu.Unlock()
		for i, b := range batch { // written, or lost with the connection
			s.giveBuf(b, pooled[i])
		}
		s.giveBuf(owed, owedBuf)
		clear(batch)
	}
}

// giveBuf gives a written frame's buffer back to the pool when it is one.
func (s *sender) giveBuf(b []byte, pooled bool) {
	if pooled {
		s.bufs.put(b)
	}
}

// releaseLocked takes the written (or lost) batch out of the bound and lets
// waiting publishers retry.
func (s *sender) releaseLocked(batch [][]byte) {
	for _, b := range batch {
		s.bytes -= len(b) + rsbsocket.FrameOverhead
	}
	s.roomLocked()
}

// uncharge takes one written (or lost) frame of n bytes out of the bound.
func (s *sender) uncharge(n int) {
	s.bytes -= n + rsbsocket.FrameOverhead
	s.roomLocked()
}

// roomLocked lets waiting publishers retry.
func (s *sender) roomLocked() {
	if s.room != nil {
		close(s.room)
		s.room = nil
	}
}

// idleLocked reports whether nothing is queued, owed or being written.
func (s *sender) idleLocked() bool {
	return len(s.pending) == 0 && s.owed == nil && !s.writing
}

// noteIdleLocked tells a waiting flush once nothing is queued, owed or
// being written.
func (s *sender) noteIdleLocked() {
	if s.drained != nil && s.idleLocked() {
		close(s.drained)
		s.drained = nil
	}
}

// dropQueuedLocked counts what is queued or owed as unsent and lets it go.
func (s *sender) dropQueuedLocked() {
	s.unsent += uint64(len(s.pending))
	s.releaseLocked(s.pending)
	clear(s.pending)
	s.pending, s.pooled = s.pending[:0], s.pooled[:0]
	if s.owed != nil {
		s.unsent++
		s.uncharge(len(s.owed))
		s.owed, s.owedBuf = nil, false
	}
	s.noteIdleLocked()
}

// failLocked ends the sender after a write error: the pending frames are
// unsent, waiting publishers and later sends fail.
func (s *sender) failLocked(err error) {
	if s.err != nil {
		return
	}
	s.err = s.wrap(err)
	s.dropQueuedLocked()
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
	if s.err != nil || s.idleLocked() {
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
		s.dropQueuedLocked()
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
