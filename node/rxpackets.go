package node

import (
	"sync"

	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/node/engine"
	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

// onPackets runs on a transport reader goroutine: it drops datagrams of
// groups nobody here wants, handles the rest on this goroutine when the
// engine is idle (straight from the reader's buffer), else copies them into
// one slab and queues it for the engine (dropping the batch, counted, when
// the queue is full).
func (n *Node) onPackets(batch []transport.Packet) {
	pp := pktPool.Get().(*[]engine.Packet)
	defer func() {
		clear(*pp)
		*pp = (*pp)[:0]
		pktPool.Put(pp)
	}()
	for _, p := range batch {
		if n.acceptPacket(p.Data) {
			*pp = append(*pp, engine.Packet{Data: p.Data, From: p.From})
		}
	}
	if len(*pp) == 0 {
		return
	}
	if !n.engineUp.Load() {
		// Only NACKs and ACKs pass acceptPacket this early (no group is
		// wanted yet): for streams of an instance that has none.
		n.m.DropN(metrics.DropUnknownStream, uint64(len(*pp)))
		return
	}
	n.eng.Receive(*pp)
}

// pktPool recycles the per-batch packet lists of the readers.
var pktPool = sync.Pool{New: func() any { return new([]engine.Packet) }}

// acceptPacket is the cheap pre-filter on the reader goroutine: DATA,
// HEARTBEAT and GONE of unwanted groups are dropped here; everything else
// is decoded and checked by the engine.
func (n *Node) acceptPacket(b []byte) bool {
	if len(b) < datagram.HeaderSize {
		n.m.Drop(metrics.DropDecodeError)
		return false
	}
	if k := datagram.Kind(b[1]); k == datagram.KindNack || k == datagram.KindAck {
		return true
	}
	var id datagram.GroupID
	copy(id[:], b[24:40])
	if !n.wanted.Has(id) {
		n.m.Drop(metrics.DropNotInterested)
		return false
	}
	return true
}
