package engine

import (
	"errors"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/transport/datagram"
)

// receive decodes and routes a batch of datagrams.
func (e *Engine) receive(b rxBatch, now time.Time) {
	for _, p := range b.pkts {
		d := &e.d
		if err := datagram.Decode(p.Data, d); err != nil {
			e.m.Drop(metrics.DropDecodeError)
			continue
		}
		e.m.DatagramsIn[kindLabel(d.Kind)].Inc()
		if d.Stream.Instance == e.cfg.Instance {
			continue
		}
		e.route(d, p, now)
		// Deliveries alias e.d's Records, which the next Decode reuses
		// (the records themselves stay in the batch's buffer).
		e.handleOutput(now)
	}
}

// route hands d to the machine it belongs to.
func (e *Engine) route(d *datagram.Datagram, p Packet, now time.Time) {
	if d.Kind == datagram.KindAck {
		if d.Target == e.cfg.Instance {
			e.handleAck(d, now)
		}
		return
	}
	if d.Kind == datagram.KindNack && d.Target == e.cfg.Instance {
		key := datagram.StreamKey{Instance: e.cfg.Instance, Group: d.Stream.Group, Class: d.Stream.Class}
		if st, ok := e.senders[key]; ok {
			e.m.NacksReceived.Inc()
			e.lastActive = now
			st.s.HandleNack(d, now, &e.out)
			e.noteSender(st)
		} else {
			e.m.Drop(metrics.DropUnknownStream)
		}
		return
	}
	if !e.env.Wanted.Has(d.Stream.Group) {
		e.m.Drop(metrics.DropNotInterested)
		return
	}
	if d.Kind != datagram.KindNack {
		e.noteOrigin(d.Stream.Instance, p)
	}
	if d.Kind == datagram.KindData && d.Stream.Class.Reliable() {
		e.noteReliableData(d.Stream)
	}
	e.rcv.Handle(d, now, &e.out)
}

// noteOrigin remembers the unicast address of a sender instance, where
// NACKs for its streams go. The map is bounded by the receivers table: it
// is pruned when instances are forgotten and capped here.
func (e *Engine) noteOrigin(inst datagram.InstanceID, p Packet) {
	if a, ok := e.origin[inst]; ok && a == p.From {
		return
	}
	if _, ok := e.origin[inst]; !ok && len(e.origin) >= maxOrigins {
		for k := range e.origin {
			delete(e.origin, k)
			break
		}
	}
	e.origin[inst] = p.From
}

// forget frees every stream of a departed sender instance.
func (e *Engine) forget(inst datagram.InstanceID, now time.Time) {
	e.rcv.Forget(inst, now, &e.out)
	delete(e.origin, inst)
	e.forgetReceiver(inst, now)
}

// deliverRecords reassembles the records of one released DATA datagram and
// collects complete events for delivery. Past deliveryMaxBytes of queued
// deliveries, unreliable events are dropped.
func (e *Engine) deliverRecords(dl qos.Delivery, now time.Time) {
	asm := e.asmUnrel
	if dl.Stream.Class.Reliable() {
		asm = e.asmRel
	} else if e.dq.overLimit() {
		e.m.DropN(metrics.DropQueueFull, uint64(len(dl.Records)))
		return
	}
	for _, r := range dl.Records {
		body, whole, err := fragmentation.UnwrapWhole(r)
		if err != nil {
			e.m.Drop(metrics.DropDecodeError)
			continue
		}
		if !whole {
			e.assemble(asm, r, dl, now)
			continue
		}
		e.dl = append(e.dl, Delivery{Kind: DeliverBody, Body: body, Size: len(body)})
	}
}

// assemble offers a fragment of the delivery dl to asm and collects the
// event it completes. On reliable streams it notes where partial events
// came from (partialOrigins).
func (e *Engine) assemble(asm *fragmentation.Assembler, r []byte, dl qos.Delivery, now time.Time) {
	n, err := asm.AddBytes(now, r)
	if asm == e.asmRel && err == nil {
		if sender, seq, ok := asm.LastEventID(); ok {
			if key := (partialKey{sender, seq}); n == nil {
				e.partials.note(key, dl.Stream, dl.Seq)
			} else {
				e.partials.done(key)
			}
		}
	}
	e.countAssemblyDrops(now)
	if err != nil {
		e.countRefusal(err)
		return
	}
	if n == nil {
		return
	}
	e.dl = append(e.dl, Delivery{Kind: DeliverMsg, Msg: n, Room: asm.TakeRoom(), Size: proto.Size(n)})
}

// countRefusal counts a fragment the assembler refused without a drop
// record: a repeat, a fragment of an event it dropped before (counted when
// it was dropped) or one that does not decode. Other refusals come with a
// record (countAssemblyDrops).
func (e *Engine) countRefusal(err error) {
	switch {
	case errors.Is(err, fragmentation.ErrDuplicate):
		e.m.Drop(metrics.DropFragmentDuplicate)
	case fragmentation.ReasonOf(err) == fragmentation.ReasonAfterDrop:
		e.m.Drop(metrics.DropFragmentAfterDrop)
	case !errors.Is(err, fragmentation.ErrDropped):
		e.m.Drop(metrics.DropDecodeError)
		e.log.Debug("fragment refused", "err", err)
	}
}

// countAssemblyDrops moves the assemblers' drop records into the metrics,
// and reports the reliable events their bounds evicted as losses.
func (e *Engine) countAssemblyDrops(now time.Time) {
	for _, a := range []*fragmentation.Assembler{e.asmRel, e.asmUnrel} {
		e.scratch.drops = a.AppendDrops(e.scratch.drops[:0])
		for _, d := range e.scratch.drops {
			e.m.Drop(assemblyDropReason(d.Reason))
			if a != e.asmRel {
				continue
			}
			if l, ok := e.partials.dropped(d); ok {
				l.At = now
				e.dl = append(e.dl, Delivery{Kind: DeliverLoss, Loss: &l})
			}
		}
	}
}

func assemblyDropReason(r fragmentation.Reason) metrics.DropReason {
	switch r {
	case fragmentation.ReasonDuplicate:
		return metrics.DropFragmentDuplicate
	case fragmentation.ReasonTimeout:
		return metrics.DropReassemblyTimeout
	case fragmentation.ReasonEvictedBytes:
		return metrics.DropReassemblyEvicted
	case fragmentation.ReasonEvictedPartials:
		return metrics.DropReassemblyLimit
	case fragmentation.ReasonEventTooLarge:
		return metrics.DropEventTooLarge
	}
	return metrics.DropFragmentInvalid
}
