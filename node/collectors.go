package node

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/group/membership"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/transport"
)

const (
	membershipLeave = membership.EventLeave
	membershipFail  = membership.EventFail
	// statsEvery is how often the engine folds its machines' counters into
	// the metrics.
	statsEvery = 100 * time.Millisecond
)

// timeNow is the engine's clock source outside the run loop.
var timeNow = time.Now

// registerCollectors adds the drop counts other packages keep to
// rsbd_drops_total and keeps the socket and queue gauges current at scrape
// time.
func (n *Node) registerCollectors() {
	n.m.AddDropSource(func(dc *metrics.DropCounts) {
		if n.sock != nil {
			st := n.sock.Stats()
			dc[metrics.DropSlowClient] += st.Drops[rsbsocket.DropQueueFull]
			dc[metrics.DropFrameTooLarge] += st.Drops[rsbsocket.DropFrameTooLarge]
			dc[metrics.DropDecodeError] += st.Drops[rsbsocket.DropMalformed] + st.Drops[rsbsocket.DropBadIntrospection]
			dc[metrics.DropSlowClient] += st.Drops[rsbsocket.DropTimeout]
			dc[metrics.DropClosed] += st.Drops[rsbsocket.DropClosed]
			dc[metrics.DropStreamLimit] += st.Drops[rsbsocket.DropParticipantLimit]
			dc[metrics.DropBadHandshake] += st.Drops[rsbsocket.DropHandshake]
		}
		if n.ep != nil {
			n.ep.Stats().AddDrops(dc)
		}
		if s := n.eng.stats.Load(); s != nil {
			dc[metrics.DropDuplicate] += s.rcv.Duplicates
			dc[metrics.DropLate] += s.rcv.LateDrops
			dc[metrics.DropUnknownStream] += s.rcv.UnknownStream
			dc[metrics.DropStreamLimit] += s.rcv.StreamsEvicted
			dc[metrics.DropMemoryLimit] += s.rcv.MemorySheds
		}
	})
	n.m.AddRefresh(func() {
		if n.sock != nil {
			st := n.sock.Stats()
			n.m.SocketConnections.Set(float64(st.ConnsCurrent))
			if d := st.ConnsTotal - n.accepted.Swap(st.ConnsTotal); d > 0 {
				n.m.SocketAccepted.Add(float64(d))
			}
			n.m.QueueDepth[metrics.QueueSocketOut].Set(float64(st.QueueFrames))
		}
		n.m.QueueDepth[metrics.QueueNetworkIn].Set(float64(len(n.eng.rxCh)))
		n.m.QueueDepth[metrics.QueueSocketIn].Set(float64(max(n.eng.pubsPending.Load(), 0)))
	})
}

// registerSocketCollector exports the socket server's back-pressure
// counters, the connections it refused and those that ended, by reason,
// read at scrape time.
func (n *Node) registerSocketCollector() {
	if n.sock == nil {
		return
	}
	ms := []metrics.SnapshotMetric[rsbsocket.Stats]{
		{Name: "rsbd_socket_publisher_waits_total", Type: prometheus.CounterValue,
			Help:  "Times a publishing client waited for a subscriber's full send queue.",
			Value: func(s rsbsocket.Stats) float64 { return float64(s.Waits) }},
		{Name: "rsbd_socket_stalls_total", Type: prometheus.CounterValue,
			Help:  "Subscribers declared stalled after a publisher waited the stall timeout for them.",
			Value: func(s rsbsocket.Stats) float64 { return float64(s.Stalls) }},
		{Name: "rsbd_socket_direct_writes_total", Type: prometheus.CounterValue,
			Help:  "Writes a forwarding client reader made itself to a connection without a writer goroutine.",
			Value: func(s rsbsocket.Stats) float64 { return float64(s.DirectWrites) }},
		{Name: "rsbd_socket_writer_starts_total", Type: prometheus.CounterValue,
			Help:  "Writer goroutines started for a connection's backlog.",
			Value: func(s rsbsocket.Stats) float64 { return float64(s.WriterStarts) }},
		{Name: "rsbd_socket_large_frames_grown_total", Type: prometheus.CounterValue,
			Help:  "Frame bodies over 1 MiB read in growing steps because the 64 MiB budget for bodies allocated whole was taken.",
			Value: func(s rsbsocket.Stats) float64 { return float64(s.LargeGrown) }},
		{Name: "rsbd_socket_spin_waits_total", Type: prometheus.CounterValue,
			Help:  "Times a client reader polled for the answer to an event it relayed instead of sleeping.",
			Value: func(s rsbsocket.Stats) float64 { return float64(s.SpinWaits) }},
		{Name: "rsbd_socket_spin_hits_total", Type: prometheus.CounterValue,
			Help:  "Polls for an answer that saw it (or the reader's own next frame) arrive.",
			Value: func(s rsbsocket.Stats) float64 { return float64(s.SpinHits) }},
		{Name: "rsbd_socket_connections_refused_total", Type: prometheus.CounterValue,
			Help:  "Client connections closed at once because the connection limit was reached.",
			Value: func(s rsbsocket.Stats) float64 { return float64(s.ConnsRefused) }},
	}
	for r := range rsbsocket.NumDisconnectReasons {
		ms = append(ms, metrics.SnapshotMetric[rsbsocket.Stats]{Name: "rsbd_socket_disconnects_total", Type: prometheus.CounterValue,
			Help:   "Client connections ended, by reason.",
			Labels: prometheus.Labels{"reason": r.String()},
			Value:  func(s rsbsocket.Stats) float64 { return float64(s.Disconnects[r]) }})
	}
	if err := n.m.Register(metrics.NewSnapshotCollector(n.sock.Stats, ms...)); err != nil {
		n.log.Error("cannot register socket metrics", "err", err)
	}
}

// registerTransportCollector exports the UDP readers' counters
// (transport.Collector).
func (n *Node) registerTransportCollector() {
	if n.ep == nil {
		return
	}
	if err := n.m.Register(transport.Collector(n.ep.Stats)); err != nil {
		n.log.Error("cannot register transport metrics", "err", err)
	}
}

// registerMembershipCollector exports the membership counters
// (membership.Collector).
func (n *Node) registerMembershipCollector() {
	if err := n.m.Register(membership.Collector(n.mem.Stats)); err != nil {
		n.log.Error("cannot register membership metrics", "err", err)
	}
}

// engineStats is the snapshot of the engine's machines the scrape reads.
type engineStats struct {
	rcv  qos.ReceiversStats
	send qos.SenderStats
	// recycled is fragOwners.recycled plus the slabs the node's carver
	// returned itself (fragmentation.RecordSlabs.recycled).
	recycled uint64
}

// publishStats folds the machines' counters into the metrics (as deltas
// since the last call) and stores a snapshot for the scrape.
func (e *engine) publishStats(now time.Time) {
	if now.Sub(e.statsAt) < statsEvery {
		return
	}
	e.statsAt = now
	s := &engineStats{rcv: e.rcv.Stats(), send: e.retired, recycled: e.frags.recycled + e.n.slabs.Recycled()}
	retained := 0
	for _, st := range e.senders {
		addSenderStats(&s.send, st.s.Stats())
		retained += st.s.HeldBytes()
	}
	m, p := e.n.m, e.stats.Load()
	if p == nil {
		p = &engineStats{}
	}
	m.NackedDatagrams.Add(float64(s.rcv.NackRanges - p.rcv.NackRanges))
	m.NacksSuppressed.Add(float64(s.rcv.NacksSuppressed - p.rcv.NacksSuppressed))
	m.RepairsReceived.Add(float64(s.rcv.RepairsReceived - p.rcv.RepairsReceived))
	m.RepairsSent.Add(float64(s.send.RepairsSent - p.send.RepairsSent))
	m.FragmentBuffersRecycled.Add(float64(s.recycled - p.recycled))
	m.BufferedBytes[metrics.BufferRetransmit].Set(float64(retained))
	m.BufferedBytes[metrics.BufferReorder].Set(float64(s.rcv.HeldBytes))
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
