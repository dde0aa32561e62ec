package qos

import (
	"math"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// Sequence numbers.
const (
	// FirstSeq is the first sequence number of every stream: a sender numbers
	// its DATA datagrams FirstSeq, FirstSeq+1, ... without wrapping.
	FirstSeq uint64 = 1
	// MaxSeq is the highest sequence number the machines accept. Datagrams
	// claiming more are ignored so that seq+1 never wraps; at a million
	// datagrams a second a stream would need 584,000 years to get there.
	MaxSeq uint64 = math.MaxUint64 - 1
)

// MaxNackRanges bounds the ranges of one NACK or GONE datagram (the wire
// limit of docs/WIRE.md, 64). Receivers split longer lists over several
// NACKs; senders look at no more than this many ranges of one NACK.
const MaxNackRanges = datagram.MaxNackRanges

// Sender defaults (SenderConfig).
const (
	// DefaultRetainCount bounds the datagrams a reliable sender keeps for
	// repair, per stream; the oldest is evicted first (publishers never block).
	DefaultRetainCount = 16384
	// DefaultRetainBytes bounds the record bytes a reliable sender keeps per
	// stream (8 MiB: about 6,000 full 1400-byte datagrams).
	DefaultRetainBytes = 8 << 20
	// DefaultRetainAge is how long a datagram stays repairable at most.
	// Receivers give up on a hole after about a second of NACKs
	// (DefaultGiveUpAfter), so 10 s also covers a receiver that was cut off
	// for several seconds.
	DefaultRetainAge = 10 * time.Second
	// DefaultRetainAcked bounds the retained datagrams that every receiver
	// the sender is told of has acknowledged (Sender.Acked): those are only
	// repaired for a receiver that fell silent or was never counted, so the
	// newest 1024 of them stay. Retaining all of them up to the other
	// bounds would hold up to RetainBytes of distinct, freshly allocated
	// memory per stream, and the page faults of filling it slow down every
	// request/reply round trip on the stream (docs/TUNING.md).
	DefaultRetainAcked = 1024
	// DefaultHeartbeatMin is the delay of the first heartbeat after data: it
	// bounds how long a receiver that lost the last datagram of a burst waits
	// before it notices (tail loss).
	DefaultHeartbeatMin = 10 * time.Millisecond
	// DefaultHeartbeatMax is where the heartbeat interval stops doubling while
	// the stream is idle, and the period of the ambient heartbeat that also
	// goes out among data to tell late joiners the retained range.
	DefaultHeartbeatMax = time.Second
	// DefaultRepairMerge is how long after repeating a datagram further NACKs
	// for it are ignored: the repair went to the whole group and serves every
	// receiver that asked within that time.
	DefaultRepairMerge = 5 * time.Millisecond
	// DefaultRepairRate is the token-bucket refill rate of repairs and GONEs,
	// in datagrams per second per stream (14 MB/s of 1400-byte datagrams).
	DefaultRepairRate = 10000
	// DefaultRepairBurst is the token-bucket depth: the most repairs one NACK
	// or one Tick can send at once (256 x 1400 B = 350 KiB, within the 4 MiB
	// socket receive buffer rsbd asks for).
	DefaultRepairBurst = 256
	// DefaultMaxPendingRepairs bounds the sequence numbers queued for repair
	// (NACKed but not yet repeated because the bucket is empty); further NACKed
	// numbers are dropped and counted, and the receiver's next NACK asks again.
	DefaultMaxPendingRepairs = 4096
)

// repairBatch is how many repair tokens a sender with a backlog waits for
// before its next Tick: a long queue is served in batches of this size
// instead of waking the owner for every datagram (1.6 ms at 10,000/s).
const repairBatch = 16

// Receiver defaults (ReceiverConfig).
const (
	// DefaultNackBackoff is the upper bound of the random delay between
	// noticing a hole and NACKing it. Receivers that hear another receiver's
	// NACK or the repair meanwhile stay quiet (NACK suppression).
	DefaultNackBackoff = 2 * time.Millisecond
	// DefaultNackInterval is how long a receiver waits for the repair before
	// it NACKs a hole again, at least. A receiver whose repairs take longer
	// (a sender slowed by its load) waits twice their smoothed delay,
	// at most NackIntervalMax, so that such a sender is not given up on
	// as if it were dead.
	DefaultNackInterval = 10 * time.Millisecond
	// DefaultNackIntervalMax is where the adaptive NACK interval stops
	// growing: a hole of a sender whose repairs took that long is given up
	// after NackTries of them (2.5 s), as the heartbeat trail would.
	DefaultNackIntervalMax = 250 * time.Millisecond
	// DefaultNackTries is how many NACKs in a row a hole gets without the
	// sender repeating anything on the stream before it may be given up as
	// lost (ReasonRetriesExhausted).
	// Any repair heard meanwhile (for this receiver or another) shows the
	// sender alive and restarts the count, so a sender working through a
	// backlog is waited for; the heartbeat trail still bounds the wait.
	DefaultNackTries = 10
	// DefaultGiveUpAfter is how long a hole is NACKed in vain at least
	// before it is given up (NACKs past NackTries come at a doubling
	// interval, at most NackIntervalMax). The ten NACKs alone take about
	// 100 ms, less than a sending daemon can be starved of CPU on a loaded
	// host (a test run under the race detector, for one): giving up then
	// would lose reliable datagrams the sender's retention still holds. A
	// second covers such stalls; a dead sender holds an ordered stream's
	// later datagrams that long.
	DefaultGiveUpAfter = time.Second
	// MaxNackTries is the most NackTries a ReceiverConfig may set.
	MaxNackTries = 1 << 16
	// DefaultReorderDatagrams bounds the datagrams an ordered reliable
	// receiver holds while it waits for a hole to be repaired.
	DefaultReorderDatagrams = 1024
	// DefaultCatchUp: a sender creates a stream when a peer first wants its
	// group, so the first datagrams are meant for receivers that are already
	// listening; losing them must be repaired, not mistaken for a late join.
	// A receiver joining a stream younger than this many datagrams therefore
	// takes it from the start; older streams are joined where they are (a
	// late joiner never asks for long history).
	DefaultCatchUp = 256
	// DefaultReorderBytes bounds the bytes of held datagrams (4 MiB).
	DefaultReorderBytes = 4 << 20
	// DefaultMaxGaps bounds the holes one reliable receiver tracks; past it the
	// oldest hole is given up (ReasonGapOverflow).
	DefaultMaxGaps = 1024
)

// DedupWindow is the number of sequence numbers below the highest one seen
// for which an unreliable receiver remembers what it delivered: duplicates in
// the window are dropped, anything older counts as a late drop.
const DedupWindow = 1024

// Receivers table defaults (ReceiversConfig).
const (
	// DefaultMaxStreams bounds the streams of one Receivers table; opening one
	// more closes the one idle for longest.
	DefaultMaxStreams = 1024
	// DefaultIdleTimeout frees a stream that has carried no DATA for this long.
	DefaultIdleTimeout = 30 * time.Second
	// DefaultMaxBytes bounds the memory of all receivers of a table (64 MiB);
	// past it the largest holders give up holes (ReasonMemoryLimit).
	DefaultMaxBytes = 64 << 20
)

// Memory accounting. The machines count the bytes they hold (record copies
// and retained records) plus these estimates of their bookkeeping.
const (
	// StreamOverhead is the fixed cost counted for every receiver.
	StreamOverhead = 512
	// gapOverhead is counted per tracked hole (the size of its entry,
	// TestGapOverhead).
	gapOverhead = 104
	// heldOverhead is counted per held datagram, plus 24 bytes per record.
	heldOverhead = 96
	// recordOverhead is counted per record held or retained (a slice header).
	recordOverhead = 24
	// retainOverhead is counted per retained datagram (its struct).
	retainOverhead = 160
	// ringSlotOverhead is counted per slot of a sender's retain ring.
	ringSlotOverhead = 80
)

// maxGapCost is the most a receiver's gap list is counted at with MaxGaps
// holes (one more is tracked transiently while the oldest is given up).
func maxGapCost(maxGaps int) int { return (maxGaps + 1) * gapOverhead }
