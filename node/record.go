package node

import (
	"errors"
	"fmt"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
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
	if err := checkEvent(ev); err != nil {
		return nil, nil, err
	}
	return marshalSized(ev, notification.NotificationSize(ev))
}

// marshalSized is marshalWhole for a checked event of the given size.
func marshalSized(ev *notification.Event, size int) (record, body []byte, err error) {
	pre := protowire.SizeTag(1) + protowire.SizeVarint(uint64(size))
	buf := appendWholePrefix(allocRecord(pre+size+wholeTrailer), size)
	buf = notification.AppendNotification(buf, ev)
	if len(buf) != pre+size {
		return nil, nil, fmt.Errorf("node: notification of %d bytes, sized %d", len(buf)-pre, size)
	}
	body = buf[pre:len(buf):len(buf)]
	return appendWholeTrailer(buf), body, nil
}

// checkEvent checks ev as notification.Marshal does.
func checkEvent(ev *notification.Event) error {
	switch md := &ev.MetaData; {
	case ev.Scope.IsZero():
		return fmt.Errorf("%w: event has no scope", notification.ErrBadScope)
	case len(ev.Causes) > notification.MaxCauses || len(md.UserTimes) > notification.MaxUserTimes ||
		len(md.UserInfos) > notification.MaxUserInfos:
		return fmt.Errorf("%w: %d causes, %d user times, %d user infos", notification.ErrTooMany,
			len(ev.Causes), len(md.UserTimes), len(md.UserInfos))
	}
	return nil
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
var wholeRoom = rsbsocket.Room{Head: maxWholePrefix, Tail: wholeTrailer}

// wrapFrame returns f's body wrapped in its unfragmented
// FragmentedNotification, in place around the body (Frame.Wrap), or nil
// when the frame has no room for it.
func wrapFrame(f *rsbsocket.Frame) []byte {
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

// recordSlab is a buffer that the records of small published events are
// carved from, saving an allocation per event. A record is retained only
// inside the node (by its sender stream for repair, by socket clients'
// queues), all bounded and released roughly in publish order, so a slab
// lives about as long as its newest record.
type recordSlab struct{ buf []byte }

// slabs hands each publishing goroutine a slab of its own for the time of
// one carve.
var slabs = sync.Pool{New: func() any { return new(recordSlab) }}

// allocRecord returns an empty buffer of capacity n: carved from a slab
// when n is at most maxSlabRecord, else allocated alone.
func allocRecord(n int) []byte {
	if n > maxSlabRecord {
		return make([]byte, 0, n)
	}
	s := slabs.Get().(*recordSlab)
	if cap(s.buf)-len(s.buf) < n {
		s.buf = make([]byte, 0, recordSlabSize)
	}
	start := len(s.buf)
	s.buf = s.buf[:start+n]
	b := s.buf[start : start : start+n]
	slabs.Put(s)
	return b
}
