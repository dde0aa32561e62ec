package sockio

import (
	"net"
	"sync"

	"github.com/rsbd/rsbd/rsbsocket/frame"
)

// BatchWriter writes frames, each as its header followed by its body, with
// one writev per batch: small bodies are copied after their header into a
// scratch buffer, large ones are referenced in place right after theirs.
// Every frame's header and body thus leave in the same system call, and
// frames never interleave. A BatchWriter is used by one goroutine at a
// time; it borrows its buffers from a pool for the time of one write, so
// an idle connection holds none. Its zero value is ready.
type BatchWriter struct {
	one [1][]byte
}

// Bufs are the buffers of one write, borrowed with GetBufs and given back
// with PutBufs.
type Bufs struct {
	// Scratch has room for coalesceBytes of frames copied together.
	Scratch []byte
	// Batch is a frame list the borrower may keep with the buffers (a
	// flushing server reader's copy of a queue's frames).
	Batch [][]byte
	vecs  net.Buffers
}

// bufPool holds the buffers of writes not in progress.
var bufPool = sync.Pool{New: func() any {
	return &Bufs{Scratch: make([]byte, 0, coalesceBytes), vecs: make(net.Buffers, 0, maxBatchVecs)}
}}

// GetBufs borrows the buffers of one write from the pool.
func GetBufs() *Bufs { return bufPool.Get().(*Bufs) }

// PutBufs gives b back to the pool; its borrower no longer uses it.
func PutBufs(b *Bufs) { bufPool.Put(b) }

// WriteSome writes a prefix of frames (at least one) with one writev and
// returns how many frames and body bytes it covered. On error the frames it
// covered may have been written partly.
func (w *BatchWriter) WriteSome(nc net.Conn, frames [][]byte) (n, bytes int, err error) {
	bufs := GetBufs()
	scratch, start := bufs.Scratch[:0], 0
	vecs := bufs.vecs[:0]
	for n < len(frames) && len(vecs) < maxBatchVecs-2 && bytes < MaxBatchBytes {
		body := frames[n]
		if n > 0 && len(body) > MaxBatchBytes {
			break // a large frame goes alone
		}
		if len(body) <= CopyMax {
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
	PutBufs(bufs)
	return n, bytes, err
}

// WritePiece writes piece, a part of a frame body of total bytes, with one
// writev; the frame header goes first when piece is the body's start.
func (w *BatchWriter) WritePiece(nc net.Conn, piece []byte, start bool, total int) error {
	bufs := GetBufs()
	vecs := bufs.vecs[:0]
	if start {
		vecs = append(vecs, frame.AppendHeader(bufs.Scratch[:0], total))
	}
	vecs = append(vecs, piece)
	out := vecs // WriteTo consumes its receiver
	_, err := out.WriteTo(nc)
	clear(vecs)
	bufs.vecs = vecs[:0]
	PutBufs(bufs)
	return err
}

// WriteOne writes a single frame with one writev.
func (w *BatchWriter) WriteOne(nc net.Conn, body []byte) error {
	w.one[0] = body
	_, _, err := w.WriteSome(nc, w.one[:])
	w.one[0] = nil
	return err
}
