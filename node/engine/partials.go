package engine

import (
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
// only counted. (The assembler itself refuses the later fragments of an
// event it dropped.) It holds at most limit entries: past that it starts
// over, and the evictions of the events it forgot are only counted. Only
// the engine uses it.
type partialOrigins struct {
	m     map[partialKey]partialOrigin
	limit int
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
	return qos.LossReport{Stream: o.stream, Range: datagram.Range{First: o.first, Last: o.last},
		Reason: qos.ReasonReassemblyEvicted}, true
}
