package node

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/group/membership"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/node/engine"
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
			n.sock.Stats().AddDrops(dc)
		}
		if n.ep != nil {
			n.ep.Stats().AddDrops(dc)
		}
		n.GuardStats().AddDrops(dc)
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

// registerSocketCollector exports the socket server's counters
// (rsbsocket.Collector).
func (n *Node) registerSocketCollector() {
	if n.sock == nil {
		return
	}
	if err := n.m.Register(rsbsocket.Collector(n.sock.Stats)); err != nil {
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

// registerEngineCollector exports the engine's receive paths and timer
// wake-ups (engine.PathsCollector).
func (n *Node) registerEngineCollector() {
	if err := n.m.Register(engine.PathsCollector(n.eng.Paths)); err != nil {
		n.log.Error("cannot register engine metrics", "err", err)
	}
}

// registerMembershipCollector exports the membership counters
// (membership.Collector).
func (n *Node) registerMembershipCollector() {
	if err := n.m.Register(membership.Collector(n.mem.Stats)); err != nil {
		n.log.Error("cannot register membership metrics", "err", err)
	}
}

// registerStreamsCollector exports the engine's stream counts as
// rsbd_streams{side="send|receive"}, read at scrape time, so that a test or
// an operator sees the state of a departed peer freed.
func (n *Node) registerStreamsCollector() {
	for _, side := range []string{"send", "receive"} {
		g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rsbd_streams",
			Help:        "Streams the node keeps state for: its own (send) and its peers' (receive).",
			ConstLabels: prometheus.Labels{"side": side}}, func() float64 {
			c := n.eng.Streams()
			if side == "send" {
				return float64(c.Send)
			}
			return float64(c.Receive)
		})
		if err := n.m.Register(g); err != nil {
			n.log.Error("cannot register stream metrics", "err", err)
		}
	}
}
