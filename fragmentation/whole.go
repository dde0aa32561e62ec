package fragmentation

import (
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rsbd/rsbd/notification"
)

// AppendWhole appends a FragmentedNotification that wraps the serialized
// Notification n unfragmented (num_data_parts 1, data_part 0) — the same
// bytes the fragmentation package produces, without decoding n.
func AppendWhole(dst, n []byte) []byte {
	dst = AppendWholePrefix(dst, len(n))
	return AppendWholeTrailer(append(dst, n...))
}

// AppendWholePrefix appends what precedes a Notification of n bytes in
// its unfragmented FragmentedNotification: the tag and length of field 1.
// It is at most MaxWholePrefixSize bytes.
func AppendWholePrefix(dst []byte, n int) []byte {
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	return protowire.AppendVarint(dst, uint64(n))
}

// AppendWholeTrailer appends what follows the Notification in an
// unfragmented FragmentedNotification: num_data_parts = 1, data_part = 0
// (WholeTrailerSize bytes).
func AppendWholeTrailer(dst []byte) []byte {
	dst = protowire.AppendTag(dst, 2, protowire.VarintType)
	dst = protowire.AppendVarint(dst, 1)
	dst = protowire.AppendTag(dst, 3, protowire.VarintType)
	return protowire.AppendVarint(dst, 0)
}

// MarshalWhole serializes ev (checked as notification.Marshal checks it)
// straight inside an unfragmented FragmentedNotification, in one buffer:
// record is the wrapper, body the Notification within it. It saves the
// copy AppendWhole would make on the publish path.
func MarshalWhole(ev *notification.Event) (record, body []byte, err error) {
	if err := notification.CheckEncodable(ev); err != nil {
		return nil, nil, err
	}
	record, body, _ = MarshalSized(nil, ev, notification.NotificationSize(ev))
	return record, body, nil
}

// MarshalSized is MarshalWhole for a checked event of size
// notification.NotificationSize(ev), in a record carved from slabs (nil:
// allocated alone). A record carved from a slab comes with the slab's
// buffer and a hold on it (RecordSlabs.alloc), which the caller drops once
// nothing reads the record any more, or keeps, and the buffer is never
// reused.
func MarshalSized(slabs *RecordSlabs, ev *notification.Event, size int) (record, body []byte, owner *Buf) {
	pre := protowire.SizeTag(1) + protowire.SizeVarint(uint64(size))
	buf, owner := slabs.alloc(pre + size + WholeTrailerSize)
	buf = notification.AppendNotificationSized(AppendWholePrefix(buf, size), ev, size)
	body = buf[pre:len(buf):len(buf)]
	return AppendWholeTrailer(buf), body, owner
}

// WholeTrailerSize is the size of num_data_parts = 1 and data_part = 0 with
// their tags; MaxWholePrefixSize that of field 1's tag and a length below 2^32
// (a socket frame's bound).
const (
	WholeTrailerSize   = 4
	MaxWholePrefixSize = 6
)

// WholeSize is the size AppendWhole produces for a Notification of n bytes.
func WholeSize(n int) int {
	return protowire.SizeTag(1) + protowire.SizeBytes(n) + WholeTrailerSize
}

// UnwrapWhole returns the Notification bytes inside record when the record
// is an unfragmented FragmentedNotification (num_data_parts 1, data_part 0),
// and ok=false for any fragment of a split event. It also gives ok=false
// for a record that repeats its notification field, which protobuf merges:
// the assembler's decoder does. The result aliases record.
func UnwrapWhole(record []byte) (n []byte, ok bool, err error) {
	var parts, part uint64 = 1, 0
	var haveN, repeated bool
	for b := record; len(b) > 0; {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, false, ErrDecode
		}
		b = b[l:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return nil, false, ErrDecode
			}
			repeated = repeated || haveN
			n, haveN, b = v, true, b[l:]
		case (num == 2 || num == 3) && typ == protowire.VarintType:
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return nil, false, ErrDecode
			}
			if num == 2 {
				parts = v
			} else {
				part = v
			}
			b = b[l:]
		default:
			l := protowire.ConsumeFieldValue(num, typ, b)
			if l < 0 {
				return nil, false, ErrDecode
			}
			b = b[l:]
		}
	}
	if !haveN {
		return nil, false, ErrDecode
	}
	return n, parts == 1 && part == 0 && !repeated, nil
}

// RecordSlabs carves the records of small events a node publishes from
// slabs, saving an allocation per event: a pooled buffer (Buf), the
// offset carved up to and the records carved. While it carves, it holds
// its buffer with slabBias holds, and each record carved takes one of them
// for its publish; when it moves on to a new buffer it drops the holds no
// record took. A buffer whose records the sender streams all let go goes
// back to the pool and is carved again, so that a steady stream of small
// events writes into memory it wrote before (see bufPoolT); one whose
// records socket clients' queues share stays held and is left to the
// garbage collector. Its zero value is ready for use.
type RecordSlabs struct {
	mu     sync.Mutex
	cur    *Buf
	off    int
	carved int32
	// recycled counts the buffers whose last hold was the slab's own:
	// every record let go before the slab moved on.
	recycled atomic.Uint64
}

// Recycled returns how many slab buffers went back to the pool when the
// slab moved on, every record carved from them let go already.
func (s *RecordSlabs) Recycled() uint64 { return s.recycled.Load() }

// alloc returns an empty buffer of capacity n and, when it was carved from
// a slab (n at most MaxSlabRecord), the slab's buffer with a hold for the
// caller; a larger record is allocated alone and owner is nil.
func (s *RecordSlabs) alloc(n int) (b []byte, owner *Buf) {
	if s == nil || n > MaxSlabRecord {
		return make([]byte, 0, n), nil
	}
	s.mu.Lock()
	b, owner = s.carve(n)
	s.mu.Unlock()
	return b, owner
}

// carve cuts an empty buffer of capacity n from the slab, moving on to a
// new buffer when n does not fit in what is left. The caller holds mu.
func (s *RecordSlabs) carve(n int) (b []byte, owner *Buf) {
	if s.cur == nil || len(s.cur.b)-s.off < n {
		if s.cur != nil && s.cur.Drop(slabBias-s.carved) {
			s.recycled.Add(1)
		}
		s.cur, s.off, s.carved = bufPool.get(RecordSlabSize), 0, 0
		s.cur.refs.Store(slabBias)
	}
	b = s.cur.b[s.off : s.off : s.off+n]
	s.off += n
	s.carved++
	return b, s.cur
}
