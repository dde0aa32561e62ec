package qos

// SenderStats are the counters of one Sender. All only grow.
type SenderStats struct {
	// DataSent counts DATA datagrams numbered; RecordsSent their records.
	DataSent, RecordsSent uint64
	// Heartbeats counts HEARTBEAT datagrams emitted.
	Heartbeats uint64
	// NacksReceived counts NACKs for this stream; NackRanges their ranges
	// (at most MaxNackRanges each).
	NacksReceived, NackRanges uint64
	// NacksIgnored counts NACKs not for this stream or for an unreliable one;
	// NackRangesTruncated ranges beyond MaxNackRanges in one NACK.
	NacksIgnored, NackRangesTruncated uint64
	// NackSeqsAbove counts NACKed sequence numbers above the highest sent.
	NackSeqsAbove uint64
	// RepairsSent counts repeated DATA datagrams (FlagRepair).
	RepairsSent uint64
	// RepairsMerged counts NACKed numbers already queued or repeated within
	// RepairMerge.
	RepairsMerged uint64
	// RepairsDropped counts NACKed numbers not queued because the repair
	// queue was full (bound drop); RepairsExpired queued ones evicted before
	// their turn.
	RepairsDropped, RepairsExpired uint64
	// GoneSent counts GONE datagrams, GoneRanges their ranges; GoneDropped
	// GONEs not sent for want of repair tokens (rate limit).
	GoneSent, GoneRanges, GoneDropped uint64
	// EvictedCount, EvictedBytes, EvictedAge and EvictedAcked count
	// retained datagrams evicted by each retention bound, EvictedClosed
	// those ReleaseAll let go.
	EvictedCount, EvictedBytes, EvictedAge, EvictedAcked, EvictedClosed uint64
}

// ReceiverStats are the counters of one Receiver (or the sum over a
// Receivers table). All only grow.
type ReceiverStats struct {
	// Datagrams counts DATA datagrams handled; Delivered those delivered and
	// Records their records.
	Datagrams, Delivered, Records uint64
	// Duplicates counts DATA already delivered or held (on reliable streams
	// also data arriving after its hole was given up).
	Duplicates uint64
	// LateDrops counts unreliable DATA dropped because it came after a higher
	// number was delivered (ordered) or fell behind the dedup window.
	LateDrops uint64
	// BeforeStart counts DATA below the number the receiver started at, and
	// repairs seen before any original DATA (late joiners take no history).
	BeforeStart uint64
	// Ignored counts datagrams of another stream, of an unknown kind, or with
	// an invalid sequence number or heartbeat.
	Ignored uint64
	// UnreliableLost counts sequence numbers an unreliable stream skipped.
	UnreliableLost uint64
	// Heartbeats, GoneReceived and NacksHeard count control datagrams
	// handled (NacksHeard: other receivers' NACKs for this stream).
	Heartbeats, GoneReceived, NacksHeard uint64
	// RepairsReceived counts repairs that filled a hole.
	RepairsReceived uint64
	// NacksSent counts NACK datagrams emitted, NackRanges their ranges.
	NacksSent, NackRanges uint64
	// NacksSuppressed counts holes whose NACK was put off because another
	// receiver's NACK for them was heard.
	NacksSuppressed uint64
	// LossReports counts reports by Reason; LostDatagrams the sequence
	// numbers they cover. The bound reasons (ReasonReorderOverflow,
	// ReasonGapOverflow, ReasonMemoryLimit, ReasonStreamClosed) are the
	// receiver's bound drops.
	LossReports, LostDatagrams [NumReasons]uint64
}

// Add adds every counter of o to s.
func (s *ReceiverStats) Add(o ReceiverStats) {
	s.Datagrams += o.Datagrams
	s.Delivered += o.Delivered
	s.Records += o.Records
	s.Duplicates += o.Duplicates
	s.LateDrops += o.LateDrops
	s.BeforeStart += o.BeforeStart
	s.Ignored += o.Ignored
	s.UnreliableLost += o.UnreliableLost
	s.Heartbeats += o.Heartbeats
	s.GoneReceived += o.GoneReceived
	s.NacksHeard += o.NacksHeard
	s.RepairsReceived += o.RepairsReceived
	s.NacksSent += o.NacksSent
	s.NackRanges += o.NackRanges
	s.NacksSuppressed += o.NacksSuppressed
	for i := range s.LossReports {
		s.LossReports[i] += o.LossReports[i]
		s.LostDatagrams[i] += o.LostDatagrams[i]
	}
}

// ReceiversStats are the counters of a Receivers table: the sum of its
// receivers' counters (live and freed) and its own.
type ReceiversStats struct {
	ReceiverStats
	// Streams is the number of live streams; HeldBytes their memory.
	Streams, HeldBytes int
	// StreamsOpened counts streams created by DATA.
	StreamsOpened uint64
	// StreamsIdle, StreamsEvicted and StreamsForgotten count streams freed
	// for idleness, to make room under MaxStreams or MaxBytes, and by Forget.
	StreamsIdle, StreamsEvicted, StreamsForgotten uint64
	// UnknownStream counts datagrams for no known stream that cannot open
	// one (heartbeats, GONEs, NACKs, repairs).
	UnknownStream uint64
	// MemorySheds counts holes given up to get under MaxBytes.
	MemorySheds uint64
}
