package fragmentation

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rsbd/rsbd/notification"
)

// splitOverhead bounds the bytes a fragment adds around its notification
// fields: the data and notification length prefixes (5 bytes each at most),
// the data and notification tags, and num_data_parts and data_part with
// their tags.
const splitOverhead = 1 + 5 + 1 + 5 + 1 + 5 + 1 + 5

// SplitPieces splits the serialized Notification body into
// FragmentedNotifications of at most capacity bytes each, without decoding
// it into a message and without copying its data: fragment 0 carries every
// field but the data together with the first data chunk, later fragments
// only event_id and a data chunk (RSB's rule). Each fragment is given as
// its head, its data chunk (aliasing body) and its tail, which is how a
// datagram sends it (datagram.Datagram.Pieces); heads and tails share one
// new buffer. body must not change while the pieces are in use.
func SplitPieces(dst [][][]byte, body []byte, capacity int) ([][][]byte, error) {
	header, eventID, data, err := scanNotification(body)
	if err != nil {
		return dst, err
	}
	plan, err := planSplit(header, eventID, len(data), capacity)
	if err != nil {
		return dst, err
	}
	flat := plan.appendPieces(make([][]byte, 0, 3*plan.parts), eventID, data, data != nil)
	for i := 0; i < len(flat); i += 3 {
		dst = append(dst, flat[i:i+3:i+3])
	}
	return dst, nil
}

// splitPlan is how n data bytes are cut into fragments of capacity bytes
// (planChunks): fragment 0 carries header and c0 bytes, the others c.
type splitPlan struct {
	header       []byte
	parts, c0, c int
}

// planSplit plans the fragments of an event with n data bytes.
func planSplit(header, eventID []byte, n, capacity int) (splitPlan, error) {
	first := capacity - len(header) - len(eventID) - splitOverhead
	rest := capacity - len(eventID) - splitOverhead
	if first < MinDataChunk {
		return splitPlan{}, fmt.Errorf("%w: %d header bytes, fragments of %d", ErrHeaderTooLarge, len(header)+len(eventID), capacity)
	}
	parts, c0, c := planChunks(n, first, rest)
	return splitPlan{header: header, parts: parts, c0: c0, c: c}, nil
}

// fragment returns what fragment i carries with left data bytes still to
// place: the header (fragment 0 only) and the length of its chunk.
func (p splitPlan) fragment(i, left int) (hdr []byte, n int) {
	if i == 0 {
		return p.header, min(left, p.c0)
	}
	return nil, min(left, p.c)
}

// SplitEvent splits an event not serialized yet into contiguous
// fragments: only its fields other than the data are encoded apart, and
// the payload is copied once, straight into the fragments. owner, when
// not nil, is the pooled buffer the fragments lie in (see splitParts).
func SplitEvent(dst [][]byte, ev *notification.Event, capacity int) (frags [][]byte, owner *Buf, err error) {
	rest := *ev
	rest.Data, rest.Present = nil, ev.Present&^notification.HasData
	small, err := notification.Marshal(&rest)
	if err != nil {
		return dst, nil, err
	}
	header, eventID, _, err := scanNotification(small)
	if err != nil {
		return dst, nil, err
	}
	hasData := len(ev.Data) > 0 || ev.Present&notification.HasData != 0
	return splitParts(dst, header, eventID, ev.Data, hasData, capacity)
}

// splitParts cuts data into fragments of at most capacity bytes: fragment 0
// carries header, the first chunk and eventID, later ones a chunk and
// eventID. All fragments share one buffer, which data is copied into. The
// chunks are balanced (see planChunks), so that a receiver sizes the
// event's buffer from any one fragment closely.
//
// A buffer of a pooled size (bufClass) comes from bufPool and is
// returned as owner, for the engine to put back once no stream holds the
// fragments; a smaller one is allocated, and owner is nil.
func splitParts(dst [][]byte, header, eventID, data []byte, hasData bool, capacity int) (frags [][]byte, owner *Buf, err error) {
	plan, err := planSplit(header, eventID, len(data), capacity)
	if err != nil {
		return dst, nil, err
	}
	var stack [3 * maxStackParts][]byte
	flat := plan.appendPieces(stack[:0], eventID, data, hasData)
	total := 0
	for _, p := range flat {
		total += len(p)
	}
	var buf []byte
	if c, _ := bufClass(total); c >= 0 {
		// Every byte of the buffer is copied over once: a reused buffer
		// is not cleared.
		owner = bufPool.get(total)
		buf = owner.b
		off := 0
		for _, p := range flat {
			off += copy(buf[off:], p)
		}
	} else {
		// Join copies every piece once into a buffer it does not clear
		// first: a fresh buffer cleared and then filled would be written
		// twice.
		buf = bytes.Join(flat, nil)
	}
	for i := 0; i < len(flat); i += 3 {
		n := len(flat[i]) + len(flat[i+1]) + len(flat[i+2])
		dst = append(dst, buf[:n:n])
		buf = buf[n:]
	}
	return dst, owner, nil
}

// maxStackParts is the most fragments whose pieces splitParts lists
// without an allocation.
const maxStackParts = 8

// appendPieces appends the fragments of the plan to dst, each as its head,
// its data chunk (aliasing data) and its tail; heads and tails share one
// new buffer.
func (p splitPlan) appendPieces(dst [][]byte, eventID, data []byte, hasData bool) [][]byte {
	meta := make([]byte, 0, len(p.header)+p.parts*(len(eventID)+splitOverhead))
	for i := 0; i < p.parts; i++ {
		hdr, n := p.fragment(i, len(data))
		start := len(meta)
		meta = appendFragmentHead(meta, hdr, eventID, n, hasData)
		mid := len(meta)
		meta = appendFragmentTail(meta, eventID, p.parts, i)
		dst = append(dst, meta[start:mid:mid], data[:n:n], meta[mid:len(meta):len(meta)])
		data = data[n:]
	}
	return dst
}

// planChunks cuts n data bytes into the fewest fragments whose chunks fit:
// at most first bytes in fragment 0 (it carries the header), at most rest
// in the others. Fragment 0 gets c0 bytes, every further fragment but the
// last c, the last the remainder (1..c bytes).
//
// The chunks are as equal as the limits allow rather than full up to the
// last: a receiver sizes an event's buffer as parts × (the chunk of the
// first fragment it sees, plus the header for fragment 0), and with full
// chunks an event just over one datagram would reserve twice its size.
// When balancing leaves the last fragment empty (many small fragments),
// the chunks are full instead: the estimate is off by one chunk at most.
func planChunks(n, first, rest int) (parts, c0, c int) {
	if n <= first {
		return 1, n, rest
	}
	parts = 1 + (n-first+rest-1)/rest
	c0 = min(first, (n+parts-1)/parts)
	c = max(c0, (n-c0+parts-2)/(parts-1))
	if last := n - c0 - (parts-2)*c; last < 1 || c > rest {
		return parts, first, rest
	}
	return parts, c0, c
}

// appendFragmentHead appends what precedes the data chunk of n bytes in a
// FragmentedNotification: field 1's tag and length, hdr, and the data
// field's tag and length when the event has data.
func appendFragmentHead(b, hdr, eventID []byte, n int, hasData bool) []byte {
	inner := len(hdr) + len(eventID)
	if hasData {
		inner += protowire.SizeTag(fieldData) + protowire.SizeBytes(n)
	}
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(inner))
	b = append(b, hdr...)
	if hasData {
		b = protowire.AppendTag(b, fieldData, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(n))
	}
	return b
}

// appendFragmentTail appends what follows the data chunk in a
// FragmentedNotification: event_id, num_data_parts and data_part.
func appendFragmentTail(b, eventID []byte, parts, part int) []byte {
	b = append(b, eventID...)
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(parts))
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(part))
}

// scanNotification splits a serialized Notification into the raw bytes of
// its fields other than data and event_id (header), the raw event_id field
// (tag included; every occurrence, when it repeats) and the data value (the
// last occurrence's, as protobuf decodes it). All but a repeated event_id
// alias body.
func scanNotification(body []byte) (header, eventID, data []byte, err error) {
	header = make([]byte, 0, 256)
	copied := false // eventID is a buffer of its own (it repeated)
	for b := body; len(b) > 0; {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, nil, nil, ErrNotification
		}
		vl := protowire.ConsumeFieldValue(num, typ, b[l:])
		if vl < 0 {
			return nil, nil, nil, ErrNotification
		}
		field := b[:l+vl]
		switch {
		case num == fieldData && typ == protowire.BytesType:
			data, _ = protowire.ConsumeBytes(b[l:])
			if data == nil {
				data = []byte{} // present but empty
			}
		case num == fieldEventID && typ == protowire.BytesType && eventID == nil:
			eventID = field
		case num == fieldEventID && typ == protowire.BytesType:
			// Repeated, it merges (protobuf): every fragment carries all
			// its occurrences, in order. Copied out of body once, then
			// appended to, so that many repeats cost linear time.
			if !copied {
				eventID, copied = append([]byte(nil), eventID...), true
			}
			eventID = append(eventID, field...)
		default:
			header = append(header, field...)
		}
		b = b[l+vl:]
	}
	if eventID == nil {
		return nil, nil, nil, fmt.Errorf("%w: no event_id", ErrNotification)
	}
	return header, eventID, data, nil
}
