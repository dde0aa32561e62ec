package qos

import (
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// retained is one datagram kept for repair.
type retained struct {
	d        *datagram.Datagram
	at       time.Time // when it was sent
	repaired time.Time // when it was last repeated; zero if never
	size     int       // bytes counted for it
	queued   bool      // in the sender's repair queue
}

// retainBuffer is a ring of the datagrams a reliable sender keeps. They are
// always a contiguous run of sequence numbers [trail, trail+n), because every
// datagram is added at the top and evicted from the bottom.
type retainBuffer struct {
	ring  []retained
	head  int    // index of the oldest entry
	n     int    // entries held
	first uint64 // sequence number of ring[head] when n > 0
	bytes int    // sum of size
}

// retainedSize is what a datagram costs while retained.
func retainedSize(d *datagram.Datagram) int {
	return retainOverhead + d.RecordBytes() + d.RecordCount()*recordOverhead
}

// push appends d (numbered seq, the next after the newest) growing the ring
// up to limit entries. The caller evicts before pushing into a full ring.
func (b *retainBuffer) push(d *datagram.Datagram, seq uint64, now time.Time, limit int) {
	if b.n == len(b.ring) {
		b.grow(limit)
	}
	if b.n == 0 {
		b.first = seq
	}
	size := retainedSize(d)
	b.ring[(b.head+b.n)%len(b.ring)] = retained{d: d, at: now, size: size}
	b.n++
	b.bytes += size
}

// grow doubles the ring (at least 16 entries, at most limit).
func (b *retainBuffer) grow(limit int) {
	size := min(max(16, 2*len(b.ring)), limit)
	ring := make([]retained, size)
	for i := 0; i < b.n; i++ {
		ring[i] = b.ring[(b.head+i)%len(b.ring)]
	}
	b.ring, b.head = ring, 0
}

// oldest returns the oldest entry; the buffer must not be empty.
func (b *retainBuffer) oldest() *retained { return &b.ring[b.head] }

// pop evicts the oldest entry and returns its datagram.
func (b *retainBuffer) pop() *datagram.Datagram {
	d := b.ring[b.head].d
	b.bytes -= b.ring[b.head].size
	b.ring[b.head] = retained{}
	b.head = (b.head + 1) % len(b.ring)
	b.n--
	b.first++
	return d
}

// get returns the entry of seq, or nil when seq is not retained.
func (b *retainBuffer) get(seq uint64) *retained {
	if b.n == 0 || seq < b.first || seq-b.first >= uint64(b.n) {
		return nil
	}
	return &b.ring[(b.head+int(seq-b.first))%len(b.ring)]
}

// trail returns the oldest retained number, or highest+1 when none is.
func (b *retainBuffer) trail(highest uint64) uint64 {
	if b.n == 0 {
		return highest + 1
	}
	return b.first
}

// held returns the bytes counted for the buffer, ring slots included.
func (b *retainBuffer) held() int {
	return b.bytes + len(b.ring)*ringSlotOverhead
}
