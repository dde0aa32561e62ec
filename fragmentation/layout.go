package fragmentation

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the RSB messages this package reads and writes by hand.
const (
	fieldNotification   protowire.Number = 1   // FragmentedNotification.notification
	fieldNumDataParts   protowire.Number = 2   // FragmentedNotification.num_data_parts
	fieldDataPart       protowire.Number = 3   // FragmentedNotification.data_part
	fieldData           protowire.Number = 9   // Notification.data
	fieldEventID        protowire.Number = 108 // Notification.event_id
	fieldSenderID       protowire.Number = 1   // EventId.sender_id
	fieldSequenceNumber protowire.Number = 2   // EventId.sequence_number
)

// maxVarintLen32 is the longest varint encoding of a uint32.
const maxVarintLen32 = 5

// layout says how an event's data is cut: fragment 0 carries first bytes,
// every later fragment rest bytes (the last one possibly fewer).
type layout struct {
	total int // num_data_parts
	first int // data bytes in fragment 0
	rest  int // data bytes in each fragment >= 1, except perhaps the last
}

// planLayout cuts dataLen data bytes into fragments of at most maxSize
// serialized bytes. hdrLen is the size of fragment 0's Notification without
// its data field, idLen the size of the event_id field that fragments >= 1
// carry, and present whether the data field is set (it matters only when the
// event stays in one fragment).
func planLayout(hdrLen, idLen, dataLen int, present bool, maxSize int) (layout, error) {
	inner := hdrLen
	if present {
		inner += dataFieldSize(dataLen)
	}
	if fragmentSize(inner, 1, 0) <= maxSize {
		return layout{total: 1, first: dataLen}, nil
	}
	if dataLen == 0 {
		return layout{}, fmt.Errorf("%w: header of %d bytes exceeds fragment size %d",
			ErrHeaderTooLarge, hdrLen, maxSize)
	}
	// Fields 2 and 3 take one tag byte each plus a varint of at most nv bytes;
	// try the smallest nv for which the resulting fragment count fits.
	for nv := 1; nv <= maxVarintLen32; nv++ {
		budget := maxSize - 2 - 2*nv
		first, rest := fitChunk(budget, hdrLen), fitChunk(budget, idLen)
		if first < MinDataChunk || rest < MinDataChunk {
			return layout{}, fmt.Errorf("%w: header of %d bytes (event id %d) leaves no room for data in %d bytes",
				ErrHeaderTooLarge, hdrLen, idLen, maxSize)
		}
		total := 1 + (dataLen-first+rest-1)/rest
		if uint64(total) > math.MaxUint32 {
			break
		}
		if protowire.SizeVarint(uint64(total)) <= nv {
			return layout{total: total, first: first, rest: rest}, nil
		}
	}
	return layout{}, fmt.Errorf("%w: %d bytes need more than %d fragments", ErrEventTooLarge, dataLen, uint32(math.MaxUint32))
}

// fitChunk returns the largest chunk c such that a notification field of
// fixed bytes plus a data field of c bytes, framed as field 1 of the
// FragmentedNotification, takes at most budget bytes; -1 if none fits.
func fitChunk(budget, fixed int) int {
	if framedSize(fixed, 0) > budget {
		return -1
	}
	c := max(0, budget-fixed-3) // the framing takes at least 3 bytes
	// The framing overhead never shrinks as c grows, so stepping back by the
	// excess once lands within the budget; the varint lengths may leave a few
	// bytes to take back.
	if over := framedSize(fixed, c) - budget; over > 0 {
		c = max(0, c-over)
	}
	for framedSize(fixed, c+1) <= budget {
		c++
	}
	return c
}

// framedSize is the size of field 1 (tag, length, message) holding a
// Notification of fixed bytes plus a data field of c bytes.
func framedSize(fixed, c int) int {
	inner := fixed + dataFieldSize(c)
	return 1 + protowire.SizeVarint(uint64(inner)) + inner
}

// dataFieldSize is the size of a Notification data field of n bytes.
func dataFieldSize(n int) int {
	return 1 + protowire.SizeVarint(uint64(n)) + n
}

// fragmentSize is the serialized size of a FragmentedNotification whose
// Notification takes inner bytes.
func fragmentSize(inner, total, index int) int {
	return 1 + protowire.SizeVarint(uint64(inner)) + inner +
		1 + protowire.SizeVarint(uint64(total)) +
		1 + protowire.SizeVarint(uint64(index))
}

// chunk returns the data of fragment i. A single fragment keeps data as is,
// so an absent data field stays absent and an empty one stays present.
func (l layout) chunk(data []byte, i int) []byte {
	if l.total == 1 {
		return data
	}
	if i == 0 {
		return data[:l.first:l.first]
	}
	start := l.first + (i-1)*l.rest
	end := min(start+l.rest, len(data))
	return data[start:end:end]
}

// innerSize is the size of fragment i's Notification.
func (l layout) innerSize(hdrLen, idLen int, data []byte, i int) int {
	if i > 0 {
		return dataFieldSize(len(l.chunk(data, i))) + idLen
	}
	if l.total == 1 && data == nil {
		return hdrLen
	}
	return hdrLen + dataFieldSize(len(l.chunk(data, 0)))
}
