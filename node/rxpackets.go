package node

import (
	"sync"

	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

// onPackets runs on a transport reader goroutine: it drops datagrams of
// groups nobody here wants, handles the rest on this goroutine when the
// engine is idle (straight from the reader's buffer), else copies them into
// one slab and queues it for the engine (dropping the batch, counted, when
// the queue is full).
func (n *Node) onPackets(batch []transport.Packet) {
	pp := pktPool.Get().(*[]rxPkt)
	defer func() {
		clear(*pp)
		*pp = (*pp)[:0]
		pktPool.Put(pp)
	}()
	total := 0
	for _, p := range batch {
		if n.acceptPacket(p.Data) {
			*pp = append(*pp, rxPkt{data: p.Data, from: p.From})
			total += len(p.Data)
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
	if n.eng.directReceive(rxBatch{pkts: *pp}) {
		return
	}
	if n.eng.rxBytes.Add(int64(total)) > int64(n.cfg.ReceiveQueueBytes) && n.eng.rxPending.Load() > 0 {
		// The queued batches hold their bound (an empty queue takes any
		// one batch): reliable streams repair what is dropped here.
		n.eng.rxBytes.Add(-int64(total))
		n.m.DropN(metrics.DropQueueFull, uint64(len(*pp)))
		return
	}
	slab := make([]byte, 0, total)
	b := rxBatch{pkts: make([]rxPkt, len(*pp)), bytes: total}
	for i, p := range *pp {
		start := len(slab)
		slab = append(slab, p.data...)
		b.pkts[i] = rxPkt{data: slab[start:len(slab):len(slab)], from: p.from}
	}
	n.eng.rxPending.Add(1)
	select {
	case n.eng.rxCh <- b:
	default:
		n.eng.rxPending.Add(-1)
		n.eng.rxBytes.Add(-int64(total))
		n.m.DropN(metrics.DropQueueFull, uint64(len(b.pkts)))
	}
}

// pktPool recycles the per-batch packet lists of the readers.
var pktPool = sync.Pool{New: func() any { return new([]rxPkt) }}

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
