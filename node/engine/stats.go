package engine

import (
	"time"

	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/qos"
)

// Stats is the snapshot of the engine's machines the metrics scrape reads.
type Stats struct {
	// Receivers is the receiver streams' counters.
	Receivers qos.ReceiversStats
	// Senders sums the counters of every sender stream, freed ones too.
	Senders qos.SenderStats
	// Recycled is the pooled buffers of sent records the engine returned,
	// plus the slabs the node's carver returned itself
	// (Env.RecordsRecycled).
	Recycled uint64
}

// Stats returns the last snapshot of the engine's counters (taken at most
// statsEvery apart while it works; zero before the first).
func (e *Engine) Stats() Stats {
	if s := e.stats.Load(); s != nil {
		return *s
	}
	return Stats{}
}

// publishStats folds the machines' counters into the metrics (as deltas
// since the last call) and stores a snapshot for the scrape.
func (e *Engine) publishStats(now time.Time) {
	if now.Sub(e.statsAt) < statsEvery {
		return
	}
	e.statsAt = now
	s := &Stats{Receivers: e.rcv.Stats(), Senders: e.retired, Recycled: e.frags.recycled}
	if e.env.RecordsRecycled != nil {
		s.Recycled += e.env.RecordsRecycled()
	}
	retained := 0
	for _, st := range e.senders {
		addSenderStats(&s.Senders, st.s.Stats())
		retained += st.s.HeldBytes()
	}
	m, p := e.m, e.stats.Load()
	if p == nil {
		p = &Stats{}
	}
	m.NackedDatagrams.Add(float64(s.Receivers.NackRanges - p.Receivers.NackRanges))
	m.NacksSuppressed.Add(float64(s.Receivers.NacksSuppressed - p.Receivers.NacksSuppressed))
	m.RepairsReceived.Add(float64(s.Receivers.RepairsReceived - p.Receivers.RepairsReceived))
	m.RepairsSent.Add(float64(s.Senders.RepairsSent - p.Senders.RepairsSent))
	m.FragmentBuffersRecycled.Add(float64(s.Recycled - p.Recycled))
	m.BufferedBytes[metrics.BufferRetransmit].Set(float64(retained))
	m.BufferedBytes[metrics.BufferReorder].Set(float64(s.Receivers.HeldBytes))
	m.BufferedBytes[metrics.BufferReassembly].Set(float64(e.asmRel.BufferedBytes() + e.asmUnrel.BufferedBytes()))
	e.stats.Store(s)
}

// addSenderStats adds the counters of b to a.
func addSenderStats(a *qos.SenderStats, b qos.SenderStats) {
	a.DataSent += b.DataSent
	a.RecordsSent += b.RecordsSent
	a.Heartbeats += b.Heartbeats
	a.NacksReceived += b.NacksReceived
	a.RepairsSent += b.RepairsSent
	a.GoneSent += b.GoneSent
	a.EvictedCount += b.EvictedCount
	a.EvictedAcked += b.EvictedAcked
	a.EvictedClosed += b.EvictedClosed
}
