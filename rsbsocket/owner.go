package rsbsocket

import (
	"log/slog"
	"time"

	"github.com/rsbd/rsbd/rsbsocket/internal/sockio"
)

// handoff is what a flushing reader passes to the writer goroutine it
// starts: the unwritten rest of a frame run the socket took only partly
// (tail, raw bytes covering tailFrames frames of tailBytes body bytes) and
// the frames of its batch it did not get to (rest). With restStarted,
// rest[0] is what is left of a large frame whose header and start were
// written, or are in the tail.
type handoff struct {
	tail                  []byte
	tailFrames, tailBytes int
	rest                  [][]byte
	restStarted           bool
}

// writeLoop is a writer goroutine: the owner of the writing side while a
// backlog lasts. It writes h, then what the queue holds, and exits when the
// queue is empty, performing the final drain of a flushing close on the way
// out.
func (c *conn) writeLoop(h handoff) {
	c.srv.stats.writers.Add(1)
	var w sockio.BatchWriter
	err := c.writeHandoff(&w, h)
	var batch [][]byte
	for err == nil {
		batch, _, _ = c.q.take(batch)
		if len(batch) == 0 {
			if c.letGo() {
				if cap(batch) > 0 {
					giveFrameList(batch) // for the next queue or writer
				}
				return
			}
			continue
		}
		err = c.writeBatch(&w, batch, false)
		clear(batch)
	}
	// The failed write aborted the queue: nothing is pending, no final drain.
	c.letGo()
}

// letGo ends the ownership of a writer goroutine; it reports false when
// frames are pending and the owner must write them. A flushing close's
// final drain is performed here.
func (c *conn) letGo() bool {
	done, final := c.q.letGo()
	if final {
		c.finalDrain()
		return true
	}
	return done
}

// writeHandoff writes what a flushing reader left: the tail, then rest.
func (c *conn) writeHandoff(w *sockio.BatchWriter, h handoff) error {
	if len(h.tail) > 0 {
		err := c.nc.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
		if err == nil {
			_, err = c.nc.Write(h.tail)
		}
		if err != nil {
			c.q.release(h.tailFrames, h.tailBytes)
			c.unqueued(h.tailFrames, writeDropReason(err))
			return c.writeFailed(err, h.rest)
		}
		c.wrote(h.tailFrames, h.tailBytes)
	}
	if len(h.rest) == 0 {
		return nil
	}
	return c.writeBatch(w, h.rest, h.restStarted)
}

// finalDrain writes what is left in a closed queue and, unless the close
// was an abort, shuts down the sending side. Its caller owns the queue
// (claimFinal or letGo's final); finalDrain ends that ownership.
func (c *conn) finalDrain() {
	var w sockio.BatchWriter
	for {
		batch, _, flush := c.q.take(nil)
		if len(batch) == 0 {
			if flush {
				c.closeWrite()
			}
			break
		}
		if c.writeBatch(&w, batch, false) != nil {
			break
		}
	}
	c.q.endFinal()
}

// writeBatch writes batch, each write bounded by WriteTimeout. A frame
// larger than sockio.MaxBatchBytes is written in pieces, each released
// from the queue's bounds once written. With started, batch[0] is the rest of a
// frame whose start is written. On failure it records the reason, drops
// what is left and closes the connection.
func (c *conn) writeBatch(w *sockio.BatchWriter, batch [][]byte, started bool) error {
	s := c.srv
	for len(batch) > 0 {
		if err := c.nc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout)); err != nil {
			return c.writeFailed(err, batch)
		}
		var n, bytes int
		var err error
		if body := batch[0]; started || len(body) > sockio.MaxBatchBytes {
			piece := body[:min(len(body), sockio.MaxBatchBytes)]
			if err = w.WritePiece(c.nc, piece, !started, len(body)); err == nil {
				bytes, started = len(piece), len(piece) < len(body)
				if started {
					batch[0] = body[len(piece):]
				} else {
					n = 1
				}
			}
		} else {
			n, bytes, err = w.WriteSome(c.nc, batch)
		}
		if err != nil {
			return c.writeFailed(err, batch)
		}
		c.wrote(n, bytes)
		batch = batch[n:]
	}
	return nil
}

// wrote releases n written frames of the given body bytes from the queue's
// bounds and counts them.
func (c *conn) wrote(n, bytes int) {
	s := c.srv
	c.q.release(n, bytes)
	s.stats.framesOut.Add(uint64(n))
	s.stats.bytesOut.Add(uint64(bytes))
}

// writeFailed handles a failed write of the frames in rest.
func (c *conn) writeFailed(err error, rest [][]byte) error {
	reason := classifyWriteError(err)
	if c.setReason(reason) {
		c.logAt(slog.LevelInfo, "write failed, closing connection", "err", err)
	}
	bytes := 0
	for _, b := range rest {
		bytes += len(b)
	}
	c.q.release(len(rest), bytes)
	c.unqueued(len(rest), writeDropReason(err))
	clear(rest)
	c.abort(reason)
	return err
}

// writeDropReason is the drop reason of frames a failed write leaves.
func writeDropReason(err error) DropReason {
	if classifyWriteError(err) == DisconnectTimeout {
		return DropTimeout
	}
	return DropClosed
}

// closeWrite shuts down the sending side (SHUT_WR).
func (c *conn) closeWrite() {
	cw, ok := c.nc.(interface{ CloseWrite() error })
	if !ok {
		return
	}
	if err := cw.CloseWrite(); err != nil {
		c.logAt(slog.LevelDebug, "shutdown of sending side failed", "err", err)
	}
}
