// Package qos owns rsbd's per-stream reliability machines: the Sender and
// Receiver state machines that turn lossy, duplicating, reordering datagrams
// into the four RSB QoS classes (datagram.Class), and the Receivers table
// that holds a daemon's receivers within fixed bounds.
//
// A stream is (sender instance, group, class) with its own sequence space
// starting at FirstSeq (docs/WIRE.md). The machines are pure: no goroutines,
// sockets, clock or randomness source of their own. Their inputs are decoded
// datagrams (*datagram.Datagram, never bytes) and the current time; their
// outputs, appended to an *Output, are datagrams to send, records to deliver
// and loss reports, and each machine tells through NextDeadline when it
// next needs Tick. Tests drive them with a virtual clock.
//
// # Sender
//
// One Sender per local stream. Send numbers a DATA datagram the owner has
// packed with records. On reliable classes the sender keeps it for repair in
// a ring bounded by count, bytes and age (oldest evicted: publishers never
// block), sends HEARTBEAT(trail, highest) HeartbeatMin after data, doubling
// to HeartbeatMax while idle and every HeartbeatMax after that (also among
// continuous data), and answers NACKs (HandleNack): ranges above the highest
// number are ignored, evicted ones get a GONE, retained ones are repeated
// with FlagRepair unless already repeated within RepairMerge, under a token
// bucket (RepairRate, RepairBurst) and a bounded repair queue. Acked lets
// it evict what every receiver acknowledged, beyond the newest RetainAcked.
// Unreliable classes are only numbered. Every datagram a sender lets go
// (evicted, or unreliable once numbered) is handed back in Output.Released,
// so that the owner may reuse its records' memory.
//
// # Receiver
//
// One Receiver per remote stream, usually inside a Receivers table. It starts
// at the first original DATA it sees (a late joiner takes no history),
// suppresses duplicates and releases records by the class's rule (see
// Receiver). On reliable classes it finds holes from sequence numbers and
// from heartbeats (a highest beyond what arrived is tail loss), NACKs them
// after a random back-off of up to NackBackoff, stays quiet while another
// receiver's NACK for the same hole is pending, and NACKs again every
// NackInterval, or every twice the smoothed delay of its repairs when the
// sender answers slower than that (at most NackIntervalMax). A hole the
// sender says is GONE, that the heartbeat trail has passed, that got
// NackTries NACKs in vain over at least GiveUpAfter, or that a bound forces
// out, is reported in a LossReport and skipped: never silence. Everything a
// receiver keeps is bounded (hold buffer, holes, dedup window) and every drop is
// counted by reason in its Stats.
//
// # Driving the machines
//
// Each machine and table has exactly one owner goroutine, which loops:
//
//	var out qos.Output
//	for {
//		select {
//		case d := <-received: // decoded, authenticated datagrams
//			switch {
//			case d.Kind == datagram.KindNack && d.Target == local:
//				senders[streamOf(d)].HandleNack(d, time.Now(), &out)
//			default:
//				table.Handle(d, time.Now(), &out)
//			}
//		case rec := <-publish:
//			sender.Send(pack(rec), time.Now(), &out)
//		case now := <-timer.C:
//			table.Tick(now, &out)
//			sender.Tick(now, &out)
//		}
//		transmit(out.Datagrams)      // to the stream's group
//		assemble(out.Deliveries)     // records, before the receive buffer is reused
//		surface(out.Losses)          // to subscribers and metrics
//		out.Reset()
//		timer.Reset(earliest(table.NextDeadline(), sender.NextDeadline()))
//	}
//
// A zero deadline means no timer is needed. Calling Tick early or more often
// is harmless; calling it late only delays NACKs, repairs and heartbeats.
//
// Memory ownership: Send keeps the datagram it numbers (reliable classes)
// until it is evicted, so the owner must neither modify nor reuse it (nor its
// records) afterwards. A receiver never keeps a reference to an input
// datagram: what it must hold (ordered reliable streams waiting for a
// repair) it copies. Delivered records therefore alias either the input
// datagram and its buffer or such a private copy, and must be consumed or
// copied before the owner reuses them (see Delivery). The slices of an
// Output are valid until its Reset.
//
// All limits and timers are in params.go; Config, SenderConfig,
// ReceiverConfig and ReceiversConfig take them as defaults for zero fields.
package qos
