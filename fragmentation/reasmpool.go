package fragmentation

import (
	"slices"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// ReassemblyPool keeps the data buffers of reassembled events that reached
// borrowing subscriptions only (WithoutRetention), so that the assemblers
// reuse them instead of allocating (and the runtime clearing) a buffer per
// event. The assemblers ask for an exact capacity; a stream of events of
// one size thus finds its buffers again. The pool is bounded by
// ReassemblyPoolBytes and ReassemblyPoolBuffers, the oldest buffers going first.
type ReassemblyPool struct {
	mu    sync.Mutex
	free  [][]byte
	bytes int
}

// Get returns a buffer of length 0 and capacity exactly c: a pooled one,
// whatever it holds, or a new one. It is the assemblers' Alloc.
func (p *ReassemblyPool) Get(c int) []byte {
	p.mu.Lock()
	for i := len(p.free) - 1; i >= 0; i-- {
		if b := p.free[i]; cap(b) == c {
			p.free = slices.Delete(p.free, i, i+1)
			p.bytes -= c
			p.mu.Unlock()
			return b
		}
	}
	p.mu.Unlock()
	return make([]byte, 0, c)
}

// Put gives back a buffer nothing uses any more.
func (p *ReassemblyPool) Put(b []byte) {
	c := cap(b)
	if c == 0 || c > ReassemblyPoolBytes {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.free) > 0 && (p.bytes+c > ReassemblyPoolBytes || len(p.free) >= ReassemblyPoolBuffers) {
		p.bytes -= cap(p.free[0])
		p.free[0] = nil
		p.free = p.free[1:]
	}
	p.free = append(p.free, b[:0])
	p.bytes += c
}

// FrameAround serializes m, whose Data lies at room[head:] (an
// Assembler's buffer with Config.Room around the data), in place: the fields
// numbered below data's go into the room before it, the others into the
// room after it, byte for byte as deterministic proto.Marshal writes them.
// It returns nil, leaving room's data untouched, when there is no room, the
// fields do not fit, or they are not in field order (unknown fields, which
// Marshal writes last); the caller then marshals.
func FrameAround(m *rsbpb.Notification, room []byte, head int) []byte {
	data := m.Data
	if room == nil || len(data) == 0 {
		return nil
	}
	m.Data = nil
	hdr, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	m.Data = data
	if err != nil {
		return nil
	}
	split, ok := splitAtData(hdr)
	if !ok {
		return nil
	}
	pre := protowire.SizeTag(fieldData) + protowire.SizeVarint(uint64(len(data)))
	start := head - split - pre
	end := head + len(data) + len(hdr) - split
	if start < 0 || end > len(room) || &room[head] != &data[0] {
		return nil
	}
	copy(room[start:], hdr[:split])
	tag := protowire.AppendTag(room[start+split:start+split], fieldData, protowire.BytesType)
	protowire.AppendVarint(tag, uint64(len(data)))
	copy(room[head+len(data):], hdr[split:])
	return room[start:end:end]
}

// splitAtData returns where the data field goes in a Notification
// serialized without it: the offset of its first field numbered above
// data's. ok is false when the fields are not in field order around it or
// do not parse.
func splitAtData(hdr []byte) (split int, ok bool) {
	split = -1
	for off := 0; off < len(hdr); {
		num, typ, n := protowire.ConsumeTag(hdr[off:])
		if n < 0 {
			return 0, false
		}
		v := protowire.ConsumeFieldValue(num, typ, hdr[off+n:])
		if v < 0 {
			return 0, false
		}
		switch {
		case num == fieldData, num < fieldData && split >= 0:
			return 0, false
		case num > fieldData && split < 0:
			split = off
		}
		off += n + v
	}
	if split < 0 {
		split = len(hdr)
	}
	return split, true
}
