package node

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/transport/datagram"
)

// partialKey names an event by its id, as the assembler's drop records do.
type partialKey struct {
	sender [16]byte
	seq    uint32
}

// partialOrigin is the stream and the datagrams that carried the fragments
// of a partial event so far.
type partialOrigin struct {
	stream      datagram.StreamKey
	first, last uint64
}

// partialOrigins remembers where the partial events of the reliable
// assembler came from, so that an event its bounds evict is reported to
// the subscriptions of its stream as a loss (ReasonReassemblyEvicted), not
// only counted; and which events were evicted, so that their later
// fragments are dropped rather than start them again (and be evicted and
// reported again). Each map holds at most limit entries: past that it
// starts over, and the evictions of the events it forgot are only counted,
// or their later fragments assembled in vain until the assembler's
// timeout. Only the engine uses it.
type partialOrigins struct {
	m       map[partialKey]partialOrigin
	evicted map[partialKey]struct{}
	limit   int
}

// wasEvicted reports whether key's event was evicted.
func (p *partialOrigins) wasEvicted(key partialKey) bool {
	_, ok := p.evicted[key]
	return ok
}

// note records that a fragment of the event key, carried by datagram seq
// of stream, is held by the assembler.
func (p *partialOrigins) note(key partialKey, stream datagram.StreamKey, seq uint64) {
	o, ok := p.m[key]
	if !ok && (p.m == nil || len(p.m) >= p.limit) {
		p.m = make(map[partialKey]partialOrigin)
	}
	if !ok || o.stream != stream {
		p.m[key] = partialOrigin{stream: stream, first: seq, last: seq}
		return
	}
	o.first, o.last = min(o.first, seq), max(o.last, seq)
	p.m[key] = o
}

// done forgets a completed event.
func (p *partialOrigins) done(key partialKey) { delete(p.m, key) }

// dropped forgets an event the assembler dropped and returns the loss to
// report when its bounds evicted it.
func (p *partialOrigins) dropped(d fragmentation.Drop) (qos.LossReport, bool) {
	key := partialKey{d.SenderID, d.SequenceNumber}
	o, ok := p.m[key]
	if !ok {
		return qos.LossReport{}, false
	}
	delete(p.m, key)
	if d.Reason != fragmentation.ReasonEvictedBytes && d.Reason != fragmentation.ReasonEvictedPartials {
		return qos.LossReport{}, false // a timeout: the hole behind it was reported
	}
	if p.evicted == nil || len(p.evicted) >= p.limit {
		p.evicted = make(map[partialKey]struct{})
	}
	p.evicted[key] = struct{}{}
	return qos.LossReport{Stream: o.stream, Range: datagram.Range{First: o.first, Last: o.last},
		Reason: qos.ReasonReassemblyEvicted}, true
}

// fragmentKey returns the event id of a serialized FragmentedNotification
// (its notification's event_id) without decoding the rest; ok is false
// when it has none of 16-byte sender id and sequence number.
func fragmentKey(r []byte) (key partialKey, ok bool) {
	n, ok := bytesField(r, 1)
	if !ok {
		return key, false
	}
	id, ok := bytesField(n, fieldEventID)
	if !ok {
		return key, false
	}
	var haveSender, haveSeq bool
	for b := id; len(b) > 0; {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return key, false
		}
		b = b[l:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, l := protowire.ConsumeBytes(b)
			if l < 0 || len(v) != len(key.sender) {
				return key, false
			}
			copy(key.sender[:], v)
			haveSender, b = true, b[l:]
		case num == 2 && typ == protowire.VarintType:
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return key, false
			}
			key.seq, haveSeq, b = uint32(v), true, b[l:]
		default:
			l := protowire.ConsumeFieldValue(num, typ, b)
			if l < 0 {
				return key, false
			}
			b = b[l:]
		}
	}
	return key, haveSender && haveSeq
}

// bytesField returns the last occurrence of length-delimited field num of
// the message b.
func bytesField(b []byte, num protowire.Number) (v []byte, ok bool) {
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, false
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			f, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return nil, false
			}
			v, ok, b = f, true, b[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			return nil, false
		}
		b = b[l:]
	}
	return v, ok
}
