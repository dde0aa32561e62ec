package qos

import (
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// Receiver is the receiving side of one stream (a remote sender instance, a
// group, a class) in this daemon. It starts at the first DATA it sees (late
// joiners take no history), suppresses duplicates, and releases datagrams by
// the class's rule:
//
//   - UnreliableUnordered: on arrival; duplicates in the dedup window dropped.
//   - UnreliableOrdered: on arrival if above everything delivered, never
//     waiting; late datagrams are dropped (LateDrops), skipped numbers
//     counted in UnreliableLost.
//   - ReliableUnordered: on arrival, exactly once; holes are NACKed.
//   - ReliableOrdered: in sequence order, holding datagrams behind holes
//     until the holes are repaired or given up.
//
// On reliable streams every hole ends repaired or in a LossReport (GONE,
// trail passed, retries exhausted, or a bound), and the stream goes on.
// A Receiver is not safe for concurrent use.
type Receiver struct {
	key      datagram.StreamKey
	local    datagram.InstanceID
	cfg      ReceiverConfig
	rng      *rand.Rand
	reliable bool
	ordered  bool

	started  bool
	start    uint64    // first sequence number seen
	lastData time.Time // last DATA handled

	// Reliable classes.
	highest   uint64          // highest number received or announced
	gaps      []gap           // holes above the edge, ascending
	held      []*heldDatagram // ordered: received behind gaps[0], ascending
	heldBytes int
	deadline  time.Time // earliest due of a pending gap
	// repairsHeard counts repairs heard on the stream, wanted or not: the
	// sign that the sender is alive and answering NACKs.
	repairsHeard uint64
	// repairDelay is the smoothed delay from a NACK to the repair that
	// filled its hole (0 until the first); the NACK interval follows it.
	repairDelay time.Duration

	// Unreliable classes.
	win window

	stats ReceiverStats
}

// NewReceiver returns the receiver of stream key in the daemon whose
// instance id is local (it signs the receiver's NACKs). A zero cfg takes the
// defaults.
func NewReceiver(local datagram.InstanceID, key datagram.StreamKey, cfg ReceiverConfig) (*Receiver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newReceiver(local, key, cfg.withDefaults()), nil
}

// newReceiver builds a receiver from a validated configuration.
func newReceiver(local datagram.InstanceID, key datagram.StreamKey, cfg ReceiverConfig) *Receiver {
	rng := cfg.Rand
	if rng == nil {
		rng = streamRand(local, key)
	}
	return &Receiver{
		key:      key,
		local:    local,
		cfg:      cfg,
		rng:      rng,
		reliable: key.Class.Reliable(),
		ordered:  key.Class.Ordered(),
	}
}

// streamRand seeds a generator from the receiving instance and the stream,
// so that receivers of one stream draw different back-offs.
func streamRand(local datagram.InstanceID, key datagram.StreamKey) *rand.Rand {
	h := fnv.New64a()
	h.Write(local[:])
	h.Write(key.Instance[:])
	h.Write(key.Group[:])
	h.Write([]byte{byte(key.Class)})
	seed := h.Sum64()
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// Key returns the receiver's stream.
func (r *Receiver) Key() datagram.StreamKey { return r.key }

// Start returns the first sequence number the receiver accepted (0 before
// any DATA).
func (r *Receiver) Start() uint64 { return r.start }

// Edge returns the lowest sequence number not yet resolved. On reliable
// streams every number from Start up to Edge-1 has been delivered or
// reported lost; on unreliable ones Edge is one above the highest number
// seen. It is 0 before any DATA.
func (r *Receiver) Edge() uint64 {
	switch {
	case !r.started:
		return 0
	case !r.reliable:
		return r.win.top + 1
	case len(r.gaps) > 0:
		return r.gaps[0].first
	}
	return r.highest + 1
}

// Gaps returns the number of holes tracked.
func (r *Receiver) Gaps() int { return len(r.gaps) }

// Held returns how many datagrams an ordered reliable receiver holds.
func (r *Receiver) Held() int { return len(r.held) }

// HeldBytes returns the memory counted for the receiver: StreamOverhead,
// its holes and its held datagrams (records plus overhead).
func (r *Receiver) HeldBytes() int {
	return StreamOverhead + len(r.gaps)*gapOverhead + r.heldBytes
}

// LastData returns when the receiver last handled DATA (zero before any).
func (r *Receiver) LastData() time.Time { return r.lastData }

// Stats returns the receiver's counters.
func (r *Receiver) Stats() ReceiverStats { return r.stats }

// NextDeadline returns when Tick must next be called, or the zero Time when
// nothing is scheduled.
func (r *Receiver) NextDeadline() time.Time { return r.deadline }

// Handle feeds one datagram heard on the stream's group: DATA, HEARTBEAT and
// GONE of this stream, and other receivers' NACKs for it (Target = the
// stream's instance, same group and class), which put off this receiver's
// own NACKs for the same holes. Anything else is counted and ignored.
//
// Handle does not modify d and keeps no reference to it: records it must
// hold are copied (see Delivery for the aliasing of delivered records).
func (r *Receiver) Handle(d *datagram.Datagram, now time.Time, out *Output) {
	switch {
	case d.Kind == datagram.KindNack:
		if d.Target != r.key.Instance || d.Stream.Group != r.key.Group ||
			d.Stream.Class != r.key.Class || d.Stream.Instance == r.local {
			r.stats.Ignored++
			return
		}
		r.heardNack(d, now)
	case d.Stream != r.key:
		r.stats.Ignored++
	case d.Kind == datagram.KindData:
		r.handleData(d, now, out)
	case d.Kind == datagram.KindHeartbeat:
		r.handleHeartbeat(d, now, out)
	case d.Kind == datagram.KindGone:
		r.handleGone(d, now, out)
	default:
		r.stats.Ignored++
	}
}

// handleData dispatches DATA by class after the start and range checks.
func (r *Receiver) handleData(d *datagram.Datagram, now time.Time, out *Output) {
	seq := d.Seq
	if seq < FirstSeq || seq > MaxSeq {
		r.stats.Ignored++
		return
	}
	r.stats.Datagrams++
	if !r.started {
		if d.Flags&datagram.FlagRepair != 0 {
			r.stats.BeforeStart++
			return
		}
		r.begin(r.startFor(seq))
	}
	r.lastData = now
	if d.Flags&datagram.FlagRepair != 0 {
		r.repairsHeard++
	}
	if seq < r.start {
		r.stats.BeforeStart++
		return
	}
	if !r.reliable {
		r.unreliableData(d, out)
		return
	}
	r.reliableData(d, now, out)
}

// startFor returns where a stream first heard at seq starts: its beginning
// for a young reliable stream (see ReceiverConfig.CatchUp), else seq.
func (r *Receiver) startFor(seq uint64) uint64 {
	if r.reliable && r.cfg.CatchUp > 0 && seq <= uint64(r.cfg.CatchUp) {
		return FirstSeq
	}
	return seq
}

// begin starts the stream at seq.
func (r *Receiver) begin(seq uint64) {
	r.started = true
	r.start = seq
	r.highest = seq - 1
	r.win.reset(seq - 1)
}

// reliableData records a DATA datagram of a reliable stream and releases it.
func (r *Receiver) reliableData(d *datagram.Datagram, now time.Time, out *Output) {
	seq := d.Seq
	if seq > r.highest {
		if seq > r.highest+1 {
			r.addGap(r.highest+1, seq-1, now)
		}
		r.highest = seq
	} else {
		if !r.fill(seq, d.Flags&datagram.FlagRepair != 0, now) {
			r.stats.Duplicates++
			return
		}
	}
	if !r.ordered || len(r.gaps) == 0 || seq < r.gaps[0].first {
		r.deliver(seq, d.Records, out)
	} else {
		r.hold(seq, d.Records)
	}
	r.settle(now, out)
	r.enforceBounds(now, out)
	r.updateDeadline()
}

// handleHeartbeat learns of tail loss (highest beyond what was seen) and of
// holes the sender no longer retains (trail beyond them).
func (r *Receiver) handleHeartbeat(d *datagram.Datagram, now time.Time, out *Output) {
	if d.Highest > MaxSeq || d.Trail > d.Highest+1 {
		r.stats.Ignored++
		return
	}
	r.stats.Heartbeats++
	if !r.started && r.reliable && d.Trail == FirstSeq && r.startFor(d.Highest) == FirstSeq && d.Highest >= FirstSeq {
		r.begin(FirstSeq) // a young stream whose first datagrams were all lost
		r.lastData = now  // counts as activity, or the table would free it as idle
	}
	if !r.reliable || !r.started {
		return
	}
	if d.Highest > r.highest {
		r.addGap(r.highest+1, d.Highest, now)
		r.highest = d.Highest
	}
	if d.Trail > r.Edge() {
		r.markLost(0, d.Trail-1, ReasonTrailPassed)
	}
	r.settle(now, out)
	r.enforceBounds(now, out)
	r.updateDeadline()
}

// handleGone gives up the holes inside the GONE ranges.
func (r *Receiver) handleGone(d *datagram.Datagram, now time.Time, out *Output) {
	r.stats.GoneReceived++
	if !r.reliable || !r.started {
		return
	}
	for _, rg := range d.Ranges[:min(len(d.Ranges), MaxNackRanges)] {
		if rg.First <= rg.Last {
			r.markLost(rg.First, rg.Last, ReasonGone)
		}
	}
	r.settle(now, out)
	r.enforceBounds(now, out)
	r.updateDeadline()
}

// deliver releases one datagram.
func (r *Receiver) deliver(seq uint64, records [][]byte, out *Output) {
	out.Deliveries = append(out.Deliveries, Delivery{Stream: r.key, Seq: seq, Records: records})
	r.stats.Delivered++
	r.stats.Records += uint64(len(records))
}

// report emits a LossReport for first..last.
func (r *Receiver) report(first, last uint64, reason Reason, now time.Time, out *Output) {
	rg := datagram.Range{First: first, Last: last}
	out.Losses = append(out.Losses, LossReport{Stream: r.key, Range: rg, Reason: reason, At: now})
	r.stats.LossReports[reason]++
	r.stats.LostDatagrams[reason] += rg.Len()
}

// Close gives up every open hole (ReasonStreamClosed) and, on an ordered
// stream, releases the held datagrams behind them in order. The table calls
// it before freeing a stream; the receiver stays usable.
func (r *Receiver) Close(now time.Time, out *Output) {
	r.giveUpAll(ReasonStreamClosed, now, out)
}
