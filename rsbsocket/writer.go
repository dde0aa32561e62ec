package rsbsocket

import "net"

// batchWriter writes frames, each as its header followed by its body, with
// one writev per batch: small bodies are copied after their header into a
// scratch buffer, large ones are referenced in place right after theirs.
// Every frame's header and body thus leave in the same system call, and
// frames never interleave. A batchWriter is used by one goroutine at a time.
type batchWriter struct {
	scratch []byte
	vecs    net.Buffers
	one     [1][]byte
}

// writeSome writes a prefix of frames (at least one) with one writev and
// returns how many frames and body bytes it covered. On error the frames it
// covered may have been written partly.
func (w *batchWriter) writeSome(nc net.Conn, frames [][]byte) (n, bytes int, err error) {
	if w.scratch == nil {
		w.scratch = make([]byte, 0, coalesceBytes)
	}
	scratch, start := w.scratch[:0], 0
	vecs := w.vecs[:0]
	for n < len(frames) && len(vecs) < maxBatchVecs-2 && bytes < maxBatchBytes {
		body := frames[n]
		if len(body) <= copyMax {
			if len(scratch)+headerSize+len(body) > cap(scratch) {
				break
			}
			scratch = AppendFrame(scratch, body)
		} else {
			if len(scratch)+headerSize > cap(scratch) {
				break
			}
			scratch = appendHeader(scratch, len(body))
			vecs = append(vecs, scratch[start:], body)
			start = len(scratch)
		}
		n++
		bytes += len(body)
	}
	if start < len(scratch) {
		vecs = append(vecs, scratch[start:])
	}
	w.scratch = scratch[:0]
	out := vecs // WriteTo consumes its receiver
	_, err = out.WriteTo(nc)
	clear(vecs) // do not pin bodies until the next batch
	w.vecs = vecs[:0]
	return n, bytes, err
}

// writeOne writes a single frame with one writev.
func (w *batchWriter) writeOne(nc net.Conn, body []byte) error {
	w.one[0] = body
	_, _, err := w.writeSome(nc, w.one[:])
	w.one[0] = nil
	return err
}
