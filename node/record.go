package node

import (
	"errors"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket/frame"
)

// errRecord is returned for a record that is not a FragmentedNotification.
var errRecord = errors.New("node: malformed FragmentedNotification record")

// appendWhole appends a FragmentedNotification that wraps the serialized
// Notification n unfragmented (num_data_parts 1, data_part 0) — the same
// bytes the fragmentation package produces, without decoding n.
func appendWhole(dst, n []byte) []byte {
	dst = appendWholePrefix(dst, len(n))
	return appendWholeTrailer(append(dst, n...))
}

// appendWholePrefix appends what precedes a Notification of n bytes in
// its unfragmented FragmentedNotification: the tag and length of field 1.
// It is at most maxWholePrefix bytes.
func appendWholePrefix(dst []byte, n int) []byte {
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	return protowire.AppendVarint(dst, uint64(n))
}

// appendWholeTrailer appends what follows the Notification in an
// unfragmented FragmentedNotification: num_data_parts = 1, data_part = 0
// (wholeTrailer bytes).
func appendWholeTrailer(dst []byte) []byte {
	dst = protowire.AppendTag(dst, 2, protowire.VarintType)
	dst = protowire.AppendVarint(dst, 1)
	dst = protowire.AppendTag(dst, 3, protowire.VarintType)
	return protowire.AppendVarint(dst, 0)
}

// wholeTrailerBytes is appendWholeTrailer's output.
var wholeTrailerBytes = appendWholeTrailer(nil)

// marshalWhole serializes ev (checked as notification.Marshal checks it)
// straight inside an unfragmented FragmentedNotification, in one buffer:
// record is the wrapper, body the Notification within it. It saves the
// copy appendWhole would make on the publish path.
func marshalWhole(ev *notification.Event) (record, body []byte, err error) {
	if err := notification.CheckEncodable(ev); err != nil {
		return nil, nil, err
	}
	record, body, _ = marshalSized(nil, ev, notification.NotificationSize(ev))
	return record, body, nil
}

// marshalSized is marshalWhole for a checked event of size
// notification.NotificationSize(ev), in a record carved from slabs (nil:
// allocated alone). A record carved from a slab comes with the slab's
// buffer and a hold on it (recordSlabs.alloc), which the caller drops once
// nothing reads the record any more, or keeps, and the buffer is never
// reused.
func marshalSized(slabs *recordSlabs, ev *notification.Event, size int) (record, body []byte, owner *fragBuf) {
	pre := protowire.SizeTag(1) + protowire.SizeVarint(uint64(size))
	buf, owner := slabs.alloc(pre + size + wholeTrailer)
	buf = notification.AppendNotificationSized(appendWholePrefix(buf, size), ev, size)
	body = buf[pre:len(buf):len(buf)]
	return appendWholeTrailer(buf), body, owner
}

// wholeTrailer is the size of num_data_parts = 1 and data_part = 0 with
// their tags; maxWholePrefix that of field 1's tag and a length below 2^32
// (a socket frame's bound).
const (
	wholeTrailer   = 4
	maxWholePrefix = 6
)

// wholeRoom is the room the socket server keeps around every frame body,
// so that a frame bound for the network is wrapped in place (wrapFrame).
var wholeRoom = frame.Room{Head: maxWholePrefix, Tail: wholeTrailer}

// wrapFrame returns f's body wrapped in its unfragmented
// FragmentedNotification, in place around the body (Frame.Wrap), or nil
// when the frame has no room for it.
func wrapFrame(f *frame.Frame) []byte {
	var pre [maxWholePrefix]byte
	rec, ok := f.Wrap(appendWholePrefix(pre[:0], len(f.Body)), wholeTrailerBytes)
	if !ok {
		return nil
	}
	return rec
}

// wholeSize is the size appendWhole produces for a Notification of n bytes.
func wholeSize(n int) int {
	return protowire.SizeTag(1) + protowire.SizeBytes(n) + wholeTrailer
}

// unwrapWhole returns the Notification bytes inside record when the record
// is an unfragmented FragmentedNotification (num_data_parts 1, data_part 0),
// and ok=false for any fragment of a split event. It also gives ok=false
// for a record that repeats its notification field, which protobuf merges:
// the assembler's decoder does. The result aliases record.
func unwrapWhole(record []byte) (n []byte, ok bool, err error) {
	var parts, part uint64 = 1, 0
	var haveN, repeated bool
	for b := record; len(b) > 0; {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, false, errRecord
		}
		b = b[l:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return nil, false, errRecord
			}
			repeated = repeated || haveN
			n, haveN, b = v, true, b[l:]
		case (num == 2 || num == 3) && typ == protowire.VarintType:
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return nil, false, errRecord
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
				return nil, false, errRecord
			}
			b = b[l:]
		}
	}
	if !haveN {
		return nil, false, errRecord
	}
	return n, parts == 1 && part == 0 && !repeated, nil
}

// recordSlabs carves the records of small events a node publishes from
// slabs, saving an allocation per event: a pooled buffer (fragBuf), the
// offset carved up to and the records carved. While it carves, it holds
// its buffer with slabBias holds, and each record carved takes one of them
// for its publish; when it moves on to a new buffer it drops the holds no
// record took. A buffer whose records the sender streams all let go goes
// back to the pool and is carved again, so that a steady stream of small
// events writes into memory it wrote before (see fragPool); one whose
// records socket clients' queues share stays held and is left to the
// garbage collector. Its zero value is ready for use.
type recordSlabs struct {
	mu     sync.Mutex
	cur    *fragBuf
	off    int
	carved int32
	// recycled counts the buffers whose last hold was the slab's own:
	// every record let go before the slab moved on.
	recycled atomic.Uint64
}

// alloc returns an empty buffer of capacity n and, when it was carved from
// a slab (n at most maxSlabRecord), the slab's buffer with a hold for the
// caller; a larger record is allocated alone and owner is nil.
func (s *recordSlabs) alloc(n int) (b []byte, owner *fragBuf) {
	if s == nil || n > maxSlabRecord {
		return make([]byte, 0, n), nil
	}
	s.mu.Lock()
	b, owner = s.carve(n)
	s.mu.Unlock()
	return b, owner
}

// carve cuts an empty buffer of capacity n from the slab, moving on to a
// new buffer when n does not fit in what is left. The caller holds mu.
func (s *recordSlabs) carve(n int) (b []byte, owner *fragBuf) {
	if s.cur == nil || len(s.cur.b)-s.off < n {
		if s.cur != nil && s.cur.drop(slabBias-s.carved) {
			s.recycled.Add(1)
		}
		s.cur, s.off, s.carved = fragPools.get(recordSlabSize), 0, 0
		s.cur.refs.Store(slabBias)
	}
	b = s.cur.b[s.off : s.off : s.off+n]
	s.off += n
	s.carved++
	return b, s.cur
}
