package fragmentation

import (
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// partial is an incomplete event. Fragments 0..next-1 are concatenated in buf;
// fragments that arrived ahead of their turn wait in stash (copied).
type partial struct {
	key      key
	created  time.Time
	total    uint32              // num_data_parts
	next     uint32              // fragments 0..next-1 are in buf
	received uint32              // distinct fragments accepted
	bytes    int                 // data bytes accepted (buf and stash)
	charge   int                 // bytes charged to the Assembler's budget
	sized    bool                // buf capacity was planned once
	header   *rsbpb.Notification // fragment 0's Notification, without data
	buf      []byte              // the data; with Config.Room, a window of room
	room     []byte              // buf's whole allocation when Config.Room is set
	stash    map[uint32][]byte
	older    *partial
	newer    *partial
}

// expired reports whether p's deadline (created + timeout) is not after now.
func (p *partial) expired(now time.Time, timeout time.Duration) bool {
	return !now.Before(p.created.Add(timeout))
}

// has reports whether fragment i was already accepted.
func (p *partial) has(i uint32) bool {
	if i < p.next {
		return true
	}
	_, ok := p.stash[i]
	return ok
}

// newPartial starts a partial event for fr, first making room under
// MaxPartialEvents (expired events go first, then the oldest). It returns nil
// when not even the bookkeeping charge fits the byte budget; that drop is
// already recorded.
func (a *Assembler) newPartial(now time.Time, fr *fragment) *partial {
	if len(a.partials) >= a.cfg.MaxPartialEvents {
		a.Prune(now)
		for len(a.partials) >= a.cfg.MaxPartialEvents {
			a.dropPartial(a.oldest, ReasonEvictedPartials)
		}
	}
	p := &partial{key: fr.key, created: now, total: fr.total}
	a.partials[p.key] = p
	p.older = a.newest
	if a.newest != nil {
		a.newest.newer = p
	} else {
		a.oldest = p
	}
	a.newest = p
	if !a.reserve(p, partialOverhead) {
		a.dropPartial(p, ReasonEvictedBytes)
		return nil
	}
	return p
}

// remove unlinks p and returns its charge to the budget.
func (a *Assembler) remove(p *partial) {
	delete(a.partials, p.key)
	if p.older != nil {
		p.older.newer = p.newer
	} else {
		a.oldest = p.newer
	}
	if p.newer != nil {
		p.newer.older = p.older
	} else {
		a.newest = p.older
	}
	p.older, p.newer = nil, nil
	a.buffered -= p.charge
	p.charge = 0
}

// reserve charges n bytes to p, evicting the oldest other partial events while
// the budget would overflow. It returns false, charging nothing, when even p
// alone does not fit.
func (a *Assembler) reserve(p *partial, n int) bool {
	for a.buffered+n > a.cfg.MaxBufferedBytes {
		victim := a.oldest
		if victim == p {
			victim = p.newer
		}
		if victim == nil {
			return false
		}
		a.dropPartial(victim, ReasonEvictedBytes)
	}
	a.buffered += n
	p.charge += n
	return true
}

// fits reports whether n more bytes fit the budget without evicting anything.
func (a *Assembler) fits(n int) bool { return a.buffered+n <= a.cfg.MaxBufferedBytes }

// insert stores fr, a new fragment of p, and returns the event if it is now
// complete. On refusal p is dropped.
func (a *Assembler) insert(p *partial, fr *fragment) (*rsbpb.Notification, error) {
	if p.bytes+len(fr.data) > a.cfg.MaxEventSize {
		return nil, a.refuse(p, fr, ReasonEventTooLarge)
	}
	if fr.index == 0 {
		if !a.reserve(p, fr.sizeOfHeader()) {
			return nil, a.refuse(p, fr, ReasonEvictedBytes)
		}
		p.header = fr.header
	}
	a.presize(p, fr)
	var ok bool
	if fr.index == p.next {
		ok = a.appendChunk(p, fr.data) && a.drain(p)
	} else {
		ok = a.hold(p, fr)
	}
	if !ok {
		return nil, a.refuse(p, fr, ReasonEvictedBytes)
	}
	if fr.index == 0 {
		p.header.Data = nil // copied into buf
	}
	p.received++
	p.bytes += len(fr.data)
	if p.next < p.total {
		return nil, nil
	}
	n := p.header
	n.Data = p.buf[:len(p.buf):len(p.buf)]
	if a.cfg.Alloc != nil {
		n.Data = p.buf // with its capacity: the buffer goes back to Alloc's source
	}
	a.room = p.room
	p.header, p.buf, p.room = nil, nil, nil
	a.remove(p)
	a.stats.Delivered++
	return n, nil
}

// presize sizes p's data buffer once, from the first fragment that is not the
// last. Senders cut equal chunks, and a later fragment trades fragment 0's
// header for the event id, so total × chunk bounds the event. rsbd's
// senders balance the chunks (only the last may be shorter), which keeps
// the estimate within about a header per fragment of the event's size. A claim whose
// lower bound ((total-2) × chunk) already exceeds MaxEventSize gets no buffer;
// otherwise the estimate, capped by MaxEventSize, is used only if it fits the
// byte budget without evicting anything, and it is charged. Without it buf
// grows with the data that arrives.
func (a *Assembler) presize(p *partial, fr *fragment) {
	if p.sized || fr.index == p.total-1 {
		return
	}
	p.sized = true
	per := uint64(len(fr.data))
	if fr.index == 0 {
		id := protowire.SizeTag(fieldEventID) + protowire.SizeBytes(proto.Size(fr.header.EventId))
		per += uint64(max(0, fr.sizeOfHeader()-id))
	}
	if per > 0 && uint64(p.total-2) > uint64(a.cfg.MaxEventSize)/per {
		return
	}
	est := int(min(uint64(p.total)*per, uint64(a.cfg.MaxEventSize)))
	grow := est - cap(p.buf)
	if grow <= 0 || !a.fits(grow) {
		return
	}
	a.reserve(p, grow) // fits: evicts nothing, cannot fail
	a.resize(p, est)
}

// appendChunk appends the next fragment's data to buf, growing it within the
// budget (doubling when that fits without eviction, exactly otherwise).
func (a *Assembler) appendChunk(p *partial, d []byte) bool {
	need := len(p.buf) + len(d)
	if old := cap(p.buf); need > old {
		newCap := min(max(need, 2*old), max(need, a.cfg.MaxEventSize))
		if !a.fits(newCap - old) {
			newCap = need
		}
		if !a.reserve(p, newCap-old) {
			return false
		}
		a.resize(p, newCap)
	}
	p.buf = append(p.buf, d...)
	p.next++
	return true
}

// drain moves stashed fragments that are now in turn into buf.
func (a *Assembler) drain(p *partial) bool {
	for len(p.stash) > 0 {
		c, ok := p.stash[p.next]
		if !ok {
			break
		}
		delete(p.stash, p.next)
		a.buffered -= len(c) + partOverhead
		p.charge -= len(c) + partOverhead
		if !a.appendChunk(p, c) {
			return false
		}
	}
	return true
}

// hold copies a fragment that arrived ahead of its turn into the stash.
func (a *Assembler) hold(p *partial, fr *fragment) bool {
	if !a.reserve(p, len(fr.data)+partOverhead) {
		return false
	}
	if p.stash == nil {
		p.stash = make(map[uint32][]byte)
	}
	c := make([]byte, len(fr.data))
	copy(c, fr.data)
	p.stash[fr.index] = c
	return true
}

// resize moves p's data into a new buffer whose data capacity is exactly
// c, so the charge always equals the capacity; with Config.Room the buffer
// (p.room) has the room around that capacity.
func (a *Assembler) resize(p *partial, c int) {
	rm := a.cfg.Room
	total := rm.Head + c + rm.Tail
	var nb []byte
	if a.cfg.Alloc != nil {
		nb = a.cfg.Alloc(total)
	}
	if cap(nb) != total {
		nb = make([]byte, 0, total) // no Alloc, or a wrong size, which would break the accounting
	}
	data := append(nb[rm.Head:rm.Head:rm.Head+c], p.buf...)
	if rm != (Room{}) {
		p.room = nb[:total]
	}
	p.buf = data
}

// sizeOfHeader returns the serialized size of fragment 0's Notification
// without its data field, computing it once for decoded messages.
func (fr *fragment) sizeOfHeader() int {
	if fr.headerSize < 0 {
		fr.headerSize = proto.Size(fr.header)
		if fr.header.Data != nil {
			fr.headerSize -= dataFieldSize(len(fr.header.Data))
		}
	}
	return fr.headerSize
}
