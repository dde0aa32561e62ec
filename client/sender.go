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
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// sender writes a socket link's frames on a goroutine of its own: a
// publisher queues its frame and returns, and the goroutine writes what was
// queued meanwhile in one system call (SendMany). A publisher in a loop
// thus costs a system call per batch instead of per event.
//
// A lone frame (nothing queued, being written or owed, and no publish in
// the last inlineGapMicros) is offered to the socket by its publisher
// itself (TrySend, which never blocks): a request, a reply or a ping then
// costs no hand-off to the writer goroutine, whose wake-up, often on the
// other CPU, each of them would otherwise wait for. What the socket does not
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
	mem     []frameMem    // whose memory pending[i] lies in
	owed    []byte        // a frame the connection began (TrySend) and owes the rest of
	owedMem frameMem      // whose memory owed lies in
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
	arena   *sendArena    // small frames are encoded into its free end (carve)
	spare   []*sendArena  // arenas whose frames were all written, for reuse
	arenas  int           // arenas made
}

// sendArena is memory small frames are encoded into one after the other
// (carve). refs counts its frames not yet written or dropped; at zero it
// is reused: from its start while it is the current arena, else as a
// spare. Guarded by the sender's mu.
type sendArena struct {
	buf  []byte
	refs int
}

// frameMem says whose memory a queued frame lies in, to give it back once
// the frame is written or dropped: an arena, a buffer of the sender's
// pool (pooled), or neither (memory of its own, left to the collector).
type frameMem struct {
	arena  *sendArena
	pooled bool
}

// frameWriter writes socket frames: a *sockclient.ClientConn.
type frameWriter interface {
	// SendMany writes the frames of bodies, after the rest of a frame
	// TrySend owes.
	SendMany(bodies [][]byte) error
	// TrySend writes the frame of body as far as the socket takes it
	// without waiting (see sockclient.ClientConn.TrySend).
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
		return s.sendLocked(body, at, frameMem{pooled: pooled})
	}
	if err := s.lockRoom(ctx, n); err != nil {
		return err
	}
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	body := s.carve(n, ev)
	return s.sendLocked(body, at, frameMem{arena: s.arena})
}

// carve encodes ev, of n bytes, into the current arena and returns its
// encoding, counted as one of the arena's frames; s.mu is held. An arena is
// only appended to while any of its frames waits: frames carved before
// stay as they are while they are written, and a full arena is left to
// them and replaced by a spare or a new one.
func (s *sender) carve(n int, ev *notification.Event) []byte {
	a := s.arena
	if a == nil || cap(a.buf)-len(a.buf) < n {
		a = s.takeArena()
		s.arena = a
	}
	start := len(a.buf)
	a.buf = notification.AppendNotificationSized(a.buf, ev, n)
	a.refs++
	return a.buf[start:len(a.buf):len(a.buf)]
}

// takeArena returns a spare arena, or a new one.
func (s *sender) takeArena() *sendArena {
	if k := len(s.spare); k > 0 {
		a := s.spare[k-1]
		s.spare[k-1] = nil
		s.spare = s.spare[:k-1]
		return a
	}
	s.arenas++
	return &sendArena{buf: make([]byte, 0, sendArenaBytes)}
}

// doneWith gives back the memory of a frame that was written or dropped
// (s.mu held): a pooled buffer to the pool, an arena's frame to its count.
// An arena none of whose frames waits any more starts over if it is the
// current one, else becomes a spare (up to sendArenaSpare of them).
func (s *sender) doneWith(b []byte, m frameMem) {
	if m.pooled {
		s.bufs.put(b)
		return
	}
	a := m.arena
	if a == nil {
		return
	}
	if a.refs--; a.refs > 0 {
		return
	}
	a.buf = a.buf[:0]
	if a != s.arena && len(s.spare) < sendArenaSpare {
		s.spare = append(s.spare, a)
	}
}

// send queues body as one frame, behind the frames before it, or writes it
// when it comes alone (see sender); at is its publish time in µs. While the
// queue is full it waits for room or ctx.
func (s *sender) send(ctx context.Context, body []byte, at int64) error {
	if err := s.lockRoom(ctx, len(body)); err != nil {
		return err
	}
	return s.sendLocked(body, at, frameMem{})
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

// sendLocked queues or offers body (see send), lying in m's memory; it is
// called with s.mu held and releases it.
func (s *sender) sendLocked(body []byte, at int64, m frameMem) error {
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
		return s.offer(body, m)
	}
	s.pending = append(s.pending, body)
	s.mem = append(s.mem, m)
	if !s.writing { // a writer looks again once it is done
		s.kickLocked()
	}
	s.mu.Unlock()
	return nil
}

// offer gives the lone frame body, already charged, to the socket on the
// caller's goroutine; it is called with s.mu held and releases it. Frames
// sent meanwhile queue behind it (writing).
func (s *sender) offer(body []byte, m frameMem) error {
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
		s.doneWith(body, m)
		s.failLocked(err)
		return s.err
	case !taken:
		s.pending = slices.Insert(s.pending, 0, body)
		s.mem = slices.Insert(s.mem, 0, m)
	case owes:
		s.owed, s.owedMem = body, m
	default:
		s.uncharge(len(body))
		s.doneWith(body, m)
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
	var batch writeBatch
	for {
		select {
		case <-s.wake:
		case <-idle.C:
			if s.endIfIdle() {
				return
			}
		}
		if !s.writeQueued(&batch) {
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
	clear(s.spare) // a burst's spare arenas go with the goroutine
	s.spare = s.spare[:0]
	return true
}

// writeBatch is the goroutine's spare slices, swapped with the queue's
// per batch.
type writeBatch struct {
	frames [][]byte
	mem    []frameMem
}

// writeQueued writes the queued frames, a batch at a time, until the queue
// is empty; w holds its spare slices. It reports false, the goroutine
// marked ended, once the sender has ended.
func (s *sender) writeQueued(w *writeBatch) bool {
	batch, mem := w.frames, w.mem
	defer func() { w.frames, w.mem = batch, mem }()
	for {
		s.mu.Lock()
		if s.err != nil {
			s.running = false
			s.mu.Unlock()
			return false
		}
		if s.writing || (len(s.pending) == 0 && s.owed == nil) {
			// Nothing to write, or a publisher offers its frame: it
			// kicks the goroutine again if it leaves any.
			s.mu.Unlock()
			return true
		}
		batch, s.pending = s.pending, batch[:0]
		mem, s.mem = s.mem, mem[:0]
		owed, owedMem := s.owed, s.owedMem
		s.owed, s.owedMem = nil, frameMem{}
		s.writing = true
		s.mu.Unlock()
		err := s.conn.SendMany(batch) // finishes owed first
		s.mu.Lock()
		s.writing = false
		s.releaseLocked(batch, mem) // written, or lost with the connection
		if owed != nil {
			s.uncharge(len(owed))
			s.doneWith(owed, owedMem)
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
		clear(batch)
		clear(mem)
	}
}

// releaseLocked takes the written (or lost) frames of batch, lying in
// mem's memory, out of the bound, gives their memory back and lets
// waiting publishers retry.
func (s *sender) releaseLocked(batch [][]byte, mem []frameMem) {
	for i, b := range batch {
		s.bytes -= len(b) + rsbsocket.FrameOverhead
		s.doneWith(b, mem[i])
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
	s.releaseLocked(s.pending, s.mem)
	clear(s.pending)
	clear(s.mem)
	s.pending, s.mem = s.pending[:0], s.mem[:0]
	if s.owed != nil {
		s.unsent++
		s.uncharge(len(s.owed))
		s.doneWith(s.owed, s.owedMem)
		s.owed, s.owedMem = nil, frameMem{}
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
	case errors.Is(err, sockclient.ErrClosed):
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
