package rsbsocket

import (
	"bufio"
	"io"
	"log/slog"
	"sync"

	"github.com/rsbd/rsbd/rsbsocket/frame"
	"golang.org/x/sys/unix"
)

// readState is what a connection's reader keeps between the runs of
// frames it handles: on the heap, so that the reader waits for a light
// connection's next frame in a shallow frame (waitReadable) and an idle
// connection's goroutine stack can shrink to its minimum.
type readState struct {
	r   connReader
	run int // introspection frames learnt in a row
	// event says the last frame was an event, not introspection: the
	// client publishes, and its next frame may well come at once.
	event bool
	// ready is waitReadable's check, made once per connection (a closure
	// made per wait would be allocated per wait); peek is its buffer.
	ready func(fd uintptr) bool
	peek  [1]byte
	poll  *answerPoll // made when the reader first polls for an answer
}

// smallReaders holds the small read buffers of connections that wait
// idle: a listening connection takes one when a frame comes and gives it
// back once it has read everything, so that thousands of idle listeners
// hold no read buffer.
var smallReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferMin) }}

// readLoop reads, checks, forwards and hands on frames until the client's
// EOF (orderly is then true) or an error. A connection that has sent
// nothing yet or introspection last (a listening client, which then stays
// silent), still reading through its small buffer, waits for its next frame
// in waitReadable, so that its stack can shrink while it idles; a client
// that publishes blocks in its read, without waitReadable's extra system
// call.
func (c *conn) readLoop() (orderly bool) {
	st := &readState{r: connReader{src: c.nc, large: &c.srv.large}}
	st.ready = peekReady(&st.peek)
	defer st.r.release()
	for {
		if c.raw != nil && !st.event && st.r.small >= 0 && st.r.empty() {
			st.r.release()
			c.waitReadable(st.ready)
		}
		st.r.take()
		if done, orderly := c.readRun(st); done {
			// What this run forwarded before it failed (a malformed
			// frame among buffered ones) is not left unwritten.
			c.flushTargets()
			return orderly
		}
	}
}

// peekReady returns the check of waitReadable: a non-blocking peek into
// buf that reports true unless the socket has nothing (EAGAIN).
func peekReady(buf *[1]byte) func(fd uintptr) bool {
	return func(fd uintptr) bool {
		_, _, err := unix.Recvfrom(int(fd), buf[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		return err != unix.EAGAIN
	}
}

// waitReadable returns once ready(fd) reports the connection has data, has
// ended or failed (its next read then says which), or the connection is
// closed. ready is a non-blocking check, so data the socket already holds
// is never waited for.
func (c *conn) waitReadable(ready func(fd uintptr) bool) {
	_ = c.raw.Read(ready)
}

// readRun reads, checks, forwards and hands on frames until its buffer is
// empty (it reads at least one frame, which may block) or the connection
// ended: done is then true, and orderly after the client's EOF.
//
// A run of introspection frames that change the client's participants (a
// client announcing many listeners at once) is learnt as a whole: their
// interest takes effect once, before the Handler sees the first of them,
// and the Handler gets them, in order, before any later frame. A client
// announcing N participants thus costs N interest updates only when it
// sends them one at a time.
func (c *conn) readRun(st *readState) (done, orderly bool) {
	s, r := c.srv, &st.r
	fresh := r.empty()
	for first := true; first || r.r.Buffered() > 0; first = false {
		body, room, err := r.next(s.cfg.MaxFrameSize, s.cfg.FrameRoom)
		if err != nil {
			c.handOn(nil)
			return true, c.readFailed(err)
		}
		if first && fresh {
			c.noteAnswer()
		}
		// A body of its own, never modified: a small one shares its scope.
		f, err := frame.ParseOwned(body, room, s.cfg.FrameRoom.Head)
		if err != nil {
			c.handOn(nil)
			s.stats.drop(DropMalformed, 1)
			c.setReason(DisconnectMalformed)
			c.logAt(slog.LevelWarn, "closing connection: frame is not a notification", "err", err, "size", len(body))
			return true, false
		}
		s.stats.framesIn.Add(1)
		s.stats.bytesIn.Add(uint64(len(body)))
		learnt := c.learn(&f)
		st.event = !learnt
		s.forward(c, body, f.Scope)
		if learnt {
			c.held = append(c.held, f)
			if st.run++; st.run == heldGrowAfter {
				r.grow() // announcing many participants: read more at once
			}
			if r.ready() && len(c.held) < heldFramesMax && !c.flushing.due() {
				continue // the next frame is buffered: learn it too
			}
			c.handOn(nil)
			continue
		}
		st.run = 0
		var lone *conn
		if !r.ready() || c.flushing.due() {
			// Before the reader may block: on the socket or in the Handler.
			lone = c.flushTargets()
		}
		c.handOn(&f)
		if lone != nil && !r.ready() {
			c.awaitAnswer(st, lone)
		}
	}
	return false, false
}

// connReader reads a connection's frames. Its buffer starts small, so that
// an idle client costs little, and grows once the client has sent enough
// small frames to be busy (readUpgradeBytes). Large bodies bypass the buffer
// whatever its size.
type connReader struct {
	src   io.Reader // the connection
	r     *bufio.Reader
	small int                // bytes of small frames read through the small buffer; -1 once grown
	large *frame.LargeBudget // the server's budget for large bodies allocated whole
}

// empty reports whether nothing is buffered.
func (cr *connReader) empty() bool { return cr.r == nil || cr.r.Buffered() == 0 }

// take gives the reader a small buffer from the pool when it has none.
func (cr *connReader) take() {
	if cr.r == nil {
		r := smallReaders.Get().(*bufio.Reader)
		r.Reset(cr.src)
		cr.r = r
	}
}

// release returns an empty small buffer to the pool; a grown one is kept.
func (cr *connReader) release() {
	if cr.r != nil && cr.small >= 0 && cr.r.Buffered() == 0 {
		cr.r.Reset(nil)
		smallReaders.Put(cr.r)
		cr.r = nil
	}
}

// ready reports whether a whole frame is buffered, so that the next call of
// next returns without reading from the connection.
func (cr *connReader) ready() bool { return frame.Buffered(cr.r) }

// next reads one frame body, with room around it (see frame.ReadFrameRoom).
func (cr *connReader) next(maxSize int, rm frame.Room) (body, room []byte, err error) {
	body, room, err = frame.ReadFrameRoom(cr.r, maxSize, rm, cr.large)
	if err != nil || cr.small < 0 || len(body)+frame.HeaderSize >= readBufferSize {
		return body, room, err
	}
	cr.small += len(body) + frame.HeaderSize
	if cr.small >= readUpgradeBytes {
		cr.grow()
	}
	return body, room, nil
}

// grow moves to the large buffer, for a client that is busy.
func (cr *connReader) grow() {
	if cr.small < 0 {
		return
	}
	// What the small buffer still holds is read through it first.
	src := cr.src
	if cr.r.Buffered() > 0 {
		src = cr.r
	}
	cr.r, cr.small = bufio.NewReaderSize(src, readBufferSize), -1
}
