package node

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/group/membership"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/transport"
)

const (
	membershipLeave = membership.EventLeave
	membershipFail  = membership.EventFail
)

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
		s := n.eng.Stats().Receivers
		dc[metrics.DropDuplicate] += s.Duplicates
		dc[metrics.DropLate] += s.LateDrops
		dc[metrics.DropUnknownStream] += s.UnknownStream
		dc[metrics.DropStreamLimit] += s.StreamsEvicted
		dc[metrics.DropMemoryLimit] += s.MemorySheds
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
		q := n.eng.Queues()
		n.m.QueueDepth[metrics.QueueNetworkIn].Set(float64(q.ReceivesQueued))
		n.m.QueueDepth[metrics.QueueSocketIn].Set(float64(q.PublishesPending))
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
