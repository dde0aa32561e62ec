package rsbsocket

import (
	"slices"
	"time"

	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/sockio"
)

// flushState is a reader's list of the connections it forwarded frames to
// since its last flush, and the bytes it forwarded meanwhile.
type flushState struct {
	targets []*conn
	bytes   int
}

// add notes a frame of n bytes forwarded to c. A target is noted once
// while the flush may still write on the reader's goroutine (up to
// directTargetsMax targets, found by a scan), so frames that alternate
// between a few targets do not pass for many; past that, only a repeat of
// the last target is left out (a flush starts a writer once per target).
func (f *flushState) add(c *conn, n int) {
	f.bytes += n
	k := len(f.targets)
	if k > 0 && f.targets[k-1] == c {
		return
	}
	if k <= directTargetsMax && slices.Contains(f.targets, c) {
		return
	}
	f.targets = append(f.targets, c)
}

// due reports whether the reader has forwarded enough since its last flush
// to flush now, even with more frames ready to read.
func (f *flushState) due() bool {
	return len(f.targets) >= flushTargetsMax || f.bytes >= flushBytes
}

// flushTargets flushes every connection c forwarded frames to since its
// last flush and returns the lone target it wrote to itself, if any. It
// runs on c's reader.
func (c *conn) flushTargets() *conn { return c.flushing.flush() }

// flush makes sure the frames queued to the noted connections get written:
// for a few, on the calling goroutine as far as their sockets take them
// without blocking; for many, by their writer goroutines, which share the
// cores, instead of one after the other here. When it wrote everything
// for a single target on the calling goroutine, it returns that target
// (see awaitAnswer).
func (f *flushState) flush() (lone *conn) {
	f.bytes = 0
	if len(f.targets) == 0 {
		return nil
	}
	if len(f.targets) > directTargetsMax {
		for i, c := range f.targets {
			f.targets[i] = nil
			if c.q.claim() {
				go c.writeLoop(handoff{})
			}
		}
	} else {
		bufs := sockio.GetBufs()
		for i, c := range f.targets {
			f.targets[i] = nil
			var wrote bool
			if bufs.Batch, wrote = c.flushDirect(bufs); wrote && len(f.targets) == 1 {
				c.relayed()
				lone = c
			}
		}
		sockio.PutBufs(bufs)
	}
	f.targets = reuse(f.targets)
	return lone
}

// flushDirect makes sure c's pending frames get written. When c's queue has
// no owner, the caller takes it and writes on its own goroutine what the
// socket takes without blocking; a writer goroutine takes over the rest. A
// queue with an owner is left to it. It returns bufs.Batch for reuse, and
// whether it wrote the whole queue itself.
func (c *conn) flushDirect(bufs *sockio.Bufs) ([][]byte, bool) {
	batch := bufs.Batch[:0]
	if !c.q.claim() {
		return batch, false
	}
	if c.raw == nil {
		go c.writeLoop(handoff{})
		return batch, false
	}
	for round := 1; ; round++ {
		batch = c.q.takeInto(batch[:0])
		if !c.writeDirect(bufs, batch) {
			clear(batch)
			return batch[:0], false
		}
		clear(batch)
		done, final := c.q.letGo()
		switch {
		case done:
			return batch[:0], true
		case final:
			go c.finalDrain()
			return batch[:0], false
		case round >= directRounds:
			go c.writeLoop(handoff{})
			return batch[:0], false
		}
	}
}

// writeDirect writes batch without blocking: its leading small frames
// coalesced in bufs.Scratch, followed in the same writev by a large frame
// from its own memory. When the socket took all of it, it reports true and
// the caller still owns the queue. Otherwise ownership has passed to a
// writer goroutine that writes the rest, or the connection failed and was
// aborted.
func (c *conn) writeDirect(bufs *sockio.Bufs, batch [][]byte) bool {
	scratch, n, nb := bufs.Scratch[:0], 0, 0
	for n < len(batch) && len(batch[n]) <= sockio.CopyMax && len(scratch)+frame.HeaderSize+len(batch[n]) <= cap(scratch) {
		scratch = frame.AppendFrame(scratch, batch[n])
		nb += len(batch[n])
		n++
	}
	small, smallBytes := n, nb
	var large []byte // written in place, right after its header in scratch
	if n < len(batch) && len(batch[n]) > sockio.CopyMax && len(scratch)+frame.HeaderSize <= cap(scratch) {
		large = batch[n]
		scratch = frame.AppendHeader(scratch, len(large))
		nb += len(large)
		n++
	}
	w, err := c.writeNow(scratch, large)
	c.srv.stats.directWrites.Add(1)
	if err != nil {
		_ = c.writeFailed(err, batch)
		c.q.letGo()
		return false
	}
	if w == len(scratch)+len(large) {
		c.wrote(n, nb)
		if n == len(batch) {
			return true
		}
		go c.writeLoop(handoff{rest: cloneFrames(batch[n:])})
		return false
	}
	go c.writeLoop(c.partialHandoff(scratch, large, w, batch[:small], smallBytes, batch[n:]))
	return false
}

// partialHandoff accounts for a direct write that the socket took only
// partly (w bytes of scratch, then of large) and returns what is left for
// a writer goroutine: the unwritten bytes of scratch (copied) and the rest
// of large (in place, its header written or in the tail), then rest.
func (c *conn) partialHandoff(scratch, large []byte, w int, small [][]byte, smallBytes int, rest [][]byte) handoff {
	full, fullBytes := framesWithin(small, w)
	c.wrote(full, fullBytes)
	h := handoff{tailFrames: len(small) - full, tailBytes: smallBytes - fullBytes}
	if w < len(scratch) {
		h.tail = append([]byte(nil), scratch[w:]...)
	} else if large != nil {
		done := w - len(scratch) // body bytes of large already written
		c.wrote(0, done)
		large = large[done:]
	}
	if large == nil {
		h.rest = cloneFrames(rest)
		return h
	}
	h.rest = append(make([][]byte, 0, 1+len(rest)), large)
	h.rest = append(h.rest, rest...)
	h.restStarted = true
	return h
}

// framesWithin counts the frames of bodies whose header and body lie wholly
// within the first w bytes of their encoding, and their body bytes.
func framesWithin(bodies [][]byte, w int) (n, bytes int) {
	end := 0
	for _, b := range bodies {
		if end += frame.HeaderSize + len(b); end > w {
			break
		}
		n++
		bytes += len(b)
	}
	return n, bytes
}

// cloneFrames copies a list of frames for a writer goroutine (the bodies
// are shared; they are never modified).
func cloneFrames(frames [][]byte) [][]byte {
	if len(frames) == 0 {
		return nil
	}
	return append([][]byte(nil), frames...)
}

// writeNow writes what of p, then q, the socket takes without blocking and
// returns how much that was.
func (c *conn) writeNow(p, q []byte) (int, error) {
	// A writer goroutine's deadline of an earlier burst may have passed;
	// a write that never waits needs none.
	return c.direct.Write(c.raw, p, q, func() error { return c.nc.SetWriteDeadline(time.Time{}) })
}
