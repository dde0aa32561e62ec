package qos

import (
	"cmp"
	"slices"
)

// heldDatagram is a private copy of a datagram an ordered reliable receiver
// holds behind a hole.
type heldDatagram struct {
	seq     uint64
	records [][]byte
	size    int
}

// hold copies the records of seq (received behind the front gap) into the
// hold buffer, which stays sorted by sequence number. The copy is one
// allocation for the bytes and one for the slice headers.
func (r *Receiver) hold(seq uint64, records [][]byte) {
	n := 0
	for _, rec := range records {
		n += len(rec)
	}
	buf := make([]byte, n)
	h := &heldDatagram{seq: seq, records: make([][]byte, len(records))}
	off := 0
	for i, rec := range records {
		end := off + copy(buf[off:], rec)
		h.records[i] = buf[off:end:end]
		off = end
	}
	h.size = heldOverhead + n + len(records)*recordOverhead
	i, _ := slices.BinarySearchFunc(r.held, seq, func(h *heldDatagram, s uint64) int {
		return cmp.Compare(h.seq, s)
	})
	r.held = slices.Insert(r.held, i, h)
	r.heldBytes += h.size
}

// releaseHeld delivers, in order, the held datagrams below the front gap
// (all of them when no gap is left).
func (r *Receiver) releaseHeld(out *Output) {
	n := 0
	for n < len(r.held) && (len(r.gaps) == 0 || r.held[n].seq < r.gaps[0].first) {
		h := r.held[n]
		r.deliver(h.seq, h.records, out)
		r.heldBytes -= h.size
		n++
	}
	if n > 0 {
		r.held = slices.Delete(r.held, 0, n)
	}
}
