package membership

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/memberlist"

	"github.com/rsbd/rsbd/transport/datagram"
)

// pushAcks tracks which members confirmed which version of the local state.
type pushAcks struct {
	mu      sync.Mutex
	version map[string]uint64 // member name -> highest version it confirmed
	changed chan struct{}     // closed and replaced on every confirmation
}

// directPushes remembers, per member, the newest local state version
// PushLocal is sending or has sent straight to it, so that the push loop
// does not send the same large state a second time.
type directPushes struct {
	mu      sync.Mutex
	version map[string]uint64 // member name -> version pushed directly
}

// note records that version v goes straight to targets; at most maxPeers
// members are remembered (one more is simply pushed twice).
func (d *directPushes) note(targets []*memberlist.Node, v uint64, maxPeers int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range targets {
		if _, ok := d.version[n.Name]; !ok && len(d.version) >= maxPeers {
			continue
		}
		d.version[n.Name] = max(d.version[n.Name], v)
	}
}

// forget drops the record of name (its direct push failed).
func (d *directPushes) forget(name string) {
	d.mu.Lock()
	delete(d.version, name)
	d.mu.Unlock()
}

// covers reports whether version v went to name directly.
func (d *directPushes) covers(name string, v uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.version[name] >= v
}

// ackSlots bounds the acknowledgements being sent at once, so a flood of pushes
// cannot pile up goroutines; a push that finds it full gets no ack and its
// sender times out.
var ackSlots = make(chan struct{}, MaxAckSends)

// PushLocal sends this node's current interest state straight to every
// alive member over TCP and waits until each has applied it (acknowledged)
// or ctx ends. Gossip carries the state as well; PushLocal makes a new
// interest known to the peers before the caller goes on (a subscription
// barrier). It returns how many members confirmed, and ctx's error when some
// did not in time.
func (m *Membership) PushLocal(ctx context.Context) (int, error) {
	targets := m.peerNodes()
	// Noted before publishing: the push loop, which publish may wake for a
	// large state, then leaves these targets to this push.
	m.direct.note(targets, m.local.Version(), m.maxPeers)
	m.publish()
	own := m.ownState.Load()
	if own == nil {
		return 0, nil
	}
	for _, n := range targets {
		msg := m.pushFor(n.Name, own)
		go func() {
			if err := m.ml.SendReliable(n, msg); err != nil {
				m.stats.pushErrors.Add(1)
				m.log.Debug("membership: interest push failed", "node", n.Name, "err", err)
				m.direct.forget(n.Name)
				m.signalPush() // the push loop tries again
				return
			}
			m.stats.pushes.Add(1)
		}()
	}
	return m.awaitAcks(ctx, targets, own.state.Version)
}

// awaitAcks waits until every target confirmed version v or ctx ends.
func (m *Membership) awaitAcks(ctx context.Context, targets []*memberlist.Node, v uint64) (int, error) {
	for {
		m.acks.mu.Lock()
		done := 0
		for _, n := range targets {
			if m.acks.version[n.Name] >= v {
				done++
			}
		}
		changed := m.acks.changed
		m.acks.mu.Unlock()
		if done == len(targets) {
			return done, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return done, fmt.Errorf("membership: %d of %d members confirmed the interest: %w", done, len(targets), ctx.Err())
		}
	}
}

// onPush applies a pushed state and confirms it to its owner.
func (m *Membership) onPush(b []byte) {
	name, st, err := decodeStateMsg(b[1:])
	if err != nil {
		m.stats.malformed.Add(1)
		return
	}
	m.apply(name, st)
	m.confirm(name, st.Instance, st.Version)
}

// confirm acknowledges version of instance's state to its owner name.
func (m *Membership) confirm(name string, instance datagram.InstanceID, version uint64) {
	ack, err := appendAckMsg(nil, m.name, instance, version)
	if err != nil {
		return
	}
	m.sendTo(name, ack, ackSlots, &m.stats.ackDrops)
}

// sendTo sends msg to member name over TCP on a goroutine holding one of
// slots; with every slot taken the message is dropped and counted.
func (m *Membership) sendTo(name string, msg []byte, slots chan struct{}, drops *atomic.Uint64) {
	node := m.peerNode(name)
	if node == nil {
		return
	}
	select {
	case slots <- struct{}{}:
	default:
		drops.Add(1)
		return
	}
	go func() {
		defer func() { <-slots }()
		if err := m.ml.SendReliable(node, msg); err != nil {
			m.log.Debug("membership: message to member failed", "node", name, "kind", msg[0], "err", err)
		}
	}()
}

// onAck records a member's confirmation of this node's state.
func (m *Membership) onAck(b []byte) {
	name, inst, v, err := decodeAckMsg(b)
	if err != nil {
		m.stats.malformed.Add(1)
		return
	}
	if inst != m.instance {
		return // a confirmation for an earlier run of this node
	}
	m.acks.mu.Lock()
	defer m.acks.mu.Unlock()
	if v > m.acks.version[name] {
		if len(m.acks.version) >= m.maxPeers && m.acks.version[name] == 0 {
			return
		}
		m.acks.version[name] = v
		close(m.acks.changed)
		m.acks.changed = make(chan struct{})
	}
}

// peerNodes returns memberlist addresses of the known remote members, built
// from this package's own copies (memberlist's Members() hands out nodes
// that its goroutines keep updating, which a concurrent send would race
// with).
func (m *Membership) peerNodes() []*memberlist.Node {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*memberlist.Node, 0, len(m.members))
	for name, mb := range m.members {
		if name == m.name || !mb.GossipAddr.IsValid() {
			continue
		}
		out = append(out, &memberlist.Node{Name: name, Addr: mb.GossipAddr.Addr().AsSlice(), Port: mb.GossipAddr.Port()})
	}
	return out
}

// peerNode returns the memberlist address of member name, if known.
func (m *Membership) peerNode(name string) *memberlist.Node {
	m.mu.Lock()
	defer m.mu.Unlock()
	mb := m.members[name]
	if mb == nil || !mb.GossipAddr.IsValid() {
		return nil
	}
	return &memberlist.Node{Name: name, Addr: mb.GossipAddr.Addr().AsSlice(), Port: mb.GossipAddr.Port()}
}
