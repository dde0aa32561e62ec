package rsbsocket

import (
	"net"
	"sync"

	"github.com/rsbd/rsbd/rsbsocket/frame"
)

// batchWriter writes frames, each as its header followed by its body, with
// one writev per batch: small bodies are copied after their header into a
// scratch buffer, large ones are referenced in place right after theirs.
// Every frame's header and body thus leave in the same system call, and
// frames never interleave. A batchWriter is used by one goroutine at a time;
// it borrows its buffers from a pool for the time of one write, so an idle
// connection holds none.
type batchWriter struct {
	one [1][]byte
}

// writeBufs are the buffers of one write.
type writeBufs struct {
	scratch []byte
	vecs    net.Buffers
	batch   [][]byte // a flushing reader's copy of a queue's frames
}

// writeBufPool holds the buffers of writes not in progress.
var writeBufPool = sync.Pool{New: func() any {
	return &writeBufs{scratch: make([]byte, 0, coalesceBytes), vecs: make(net.Buffers, 0, maxBatchVecs)}
}}

// writeSome writes a prefix of frames (at least one) with one writev and
// returns how many frames and body bytes it covered. On error the frames it
// covered may have been written partly.
func (w *batchWriter) writeSome(nc net.Conn, frames [][]byte) (n, bytes int, err error) {
	bufs := writeBufPool.Get().(*writeBufs)
	scratch, start := bufs.scratch[:0], 0
	vecs := bufs.vecs[:0]
	for n < len(frames) && len(vecs) < maxBatchVecs-2 && bytes < maxBatchBytes {
		body := frames[n]
		if n > 0 && len(body) > maxBatchBytes {
			break // a large frame goes alone
		}
		if len(body) <= copyMax {
			if len(scratch)+frame.HeaderSize+len(body) > cap(scratch) {
				break
			}
			scratch = frame.AppendFrame(scratch, body)
		} else {
			if len(scratch)+frame.HeaderSize > cap(scratch) {
				break
			}
			scratch = frame.AppendHeader(scratch, len(body))
			vecs = append(vecs, scratch[start:], body)
			start = len(scratch)
		}
		n++
		bytes += len(body)
	}
	if start < len(scratch) {
		vecs = append(vecs, scratch[start:])
	}
	out := vecs // WriteTo consumes its receiver
	_, err = out.WriteTo(nc)
	clear(vecs) // do not pin bodies while pooled
	bufs.vecs = vecs[:0]
	writeBufPool.Put(bufs)
	return n, bytes, err
}

// writePiece writes piece, a part of a frame body of total bytes, with one
// writev; the frame header goes first when piece is the body's start.
func (w *batchWriter) writePiece(nc net.Conn, piece []byte, start bool, total int) error {
	bufs := writeBufPool.Get().(*writeBufs)
	vecs := bufs.vecs[:0]
	if start {
		vecs = append(vecs, frame.AppendHeader(bufs.scratch[:0], total))
	}
	vecs = append(vecs, piece)
	out := vecs // WriteTo consumes its receiver
	_, err := out.WriteTo(nc)
	clear(vecs)
	bufs.vecs = vecs[:0]
	writeBufPool.Put(bufs)
	return err
}

// writeOne writes a single frame with one writev.
func (w *batchWriter) writeOne(nc net.Conn, body []byte) error {
	w.one[0] = body
	_, _, err := w.writeSome(nc, w.one[:])
	w.one[0] = nil
	return err
}
