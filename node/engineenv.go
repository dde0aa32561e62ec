package node

import (
	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/node/engine"
	"github.com/rsbd/rsbd/transport/datagram"
)

// newEngine makes the node's stream engine: its limits from the node's
// Config, its environment from the node (engineSinks).
func (n *Node) newEngine() (*engine.Engine, error) {
	cfg := engine.Config{
		Instance:          n.instance,
		MaxDatagram:       n.cfg.MaxDatagram,
		Unicast:           n.cfg.Unicast,
		MaxSenders:        n.cfg.MaxSenders,
		Streams:           n.cfg.Streams,
		Assembly:          n.cfg.Assembly,
		PublishQueue:      n.cfg.PublishQueue,
		PublishQueueBytes: n.cfg.PublishQueueBytes,
		ReceiveQueue:      n.cfg.ReceiveQueue,
		ReceiveQueueBytes: n.cfg.ReceiveQueueBytes,
	}
	if n.guard != nil {
		cfg.MaxDatagram -= datagram.SealOverhead // the seal fits in the datagram size
	}
	cfg.Assembly.Alloc = n.reasm.Get
	cfg.Assembly.Room = fragmentation.Room{Head: reasmHead, Tail: reasmTail}
	if n.ep != nil {
		cfg.RecvBuffer = n.ep.Stats().RecvBuffer
	}
	return engine.New(cfg, engine.Env{
		Conn:            n.conn,
		Groups:          n.pool,
		Interest:        func() group.InterestReader { return n.interest() },
		Wanted:          &n.wanted,
		Sinks:           engineSinks{n},
		RecordsRecycled: n.slabs.Recycled,
		Metrics:         n.m,
		Log:             n.log,
	})
}

// engineSinks is the node as the engine's deliverer (engine.Sinks).
type engineSinks struct{ n *Node }

// Deliver runs ds on the reader that received them (deliverAll).
func (s engineSinks) Deliver(ds []engine.Delivery, stable bool) { s.n.deliverAll(ds, stable) }

// InlineLimit is inlineLimit.
func (s engineSinks) InlineLimit() int { return s.n.inlineLimit() }

// Answered is answered.
func (s engineSinks) Answered() { s.n.answered() }

// Backlogged reports whether a socket client's queue has less room left
// than reserve.
func (s engineSinks) Backlogged(reserve int) bool {
	return s.n.sock != nil && s.n.sock.BackloggedWithin(reserve)
}
