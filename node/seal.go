package node

import (
	"errors"
	"fmt"

	"github.com/rsbd/rsbd/group/membership"
	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

// ErrNoKeys is returned by SetKeys on a node started without keys: sealing
// cannot be turned on while running.
var ErrNoKeys = errors.New("node: started without keys")

// Sealed reports whether the node seals its data plane and gossip.
func (n *Node) Sealed() bool { return n.guard != nil }

// newGuard makes the data plane's Guard when the node has keys.
func (n *Node) newGuard() error {
	if len(n.cfg.Keys) == 0 {
		return nil
	}
	s, err := datagram.NewSealer(n.cfg.ClusterLabel, n.cfg.Keys)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	n.guard, err = transport.NewGuard(transport.GuardConfig{Sealer: s, Instance: n.instance})
	return err
}

// guardHandler returns h behind the Guard, if any.
func (n *Node) guardHandler(h transport.Handler) transport.Handler {
	if n.guard == nil {
		return h
	}
	return n.guard.Handler(h)
}

// guardConn returns c sealing through the Guard, if any.
func (n *Node) guardConn(c transport.Conn) transport.Conn {
	if n.guard == nil {
		return c
	}
	return n.guard.Conn(c)
}

// sealMembership gives the gossip the node's keys and cluster label, and
// the Guard the member lookup.
func (n *Node) sealMembership(mc *membership.Config) {
	if mc.Label == "" {
		mc.Label = n.cfg.ClusterLabel
	}
	if len(n.cfg.Keys) > 0 && len(mc.SecretKey) == 0 {
		mc.Keys = gossipKeys(n.cfg.Keys)
	}
}

func gossipKeys(keys []datagram.Key) [][]byte {
	out := make([][]byte, len(keys))
	for i := range keys {
		out[i] = keys[i].Secret[:]
	}
	return out
}

// SetKeys replaces the keyring of the data plane and the gossip (the first
// key seals, all open), for rotation without downtime: add the new key on
// every node, then make it the primary on every node, then remove the old
// one. The cluster label stays. On error the keys in force stay.
func (n *Node) SetKeys(keys []datagram.Key) error {
	if n.guard == nil {
		return ErrNoKeys
	}
	s, err := datagram.NewSealer(n.cfg.ClusterLabel, keys)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := n.mem.SetKeys(gossipKeys(keys)); err != nil {
		return err
	}
	n.guard.SetSealer(s)
	return nil
}

// GuardStats returns the counters of the data plane's Guard (zero without
// keys).
func (n *Node) GuardStats() transport.GuardStats {
	if n.guard == nil {
		return transport.GuardStats{}
	}
	return n.guard.Stats()
}
