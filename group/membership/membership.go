package membership

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/transport/datagram"
)

// ErrClosed is returned by methods called after Close.
var ErrClosed = errors.New("membership: closed")

// LocalState describes this node to the cluster.
type LocalState struct {
	// Instance identifies this run of the daemon. Zero: New picks a random one.
	Instance datagram.InstanceID
	// DataAddr is the unicast UDP address peers send data to (unicast mode).
	DataAddr netip.AddrPort
	// Groups are the groups this node wants from the start (one reference each).
	Groups []group.GroupID
}

// Member is a node of the cluster as this node knows it.
type Member struct {
	// Name is the memberlist node name.
	Name string
	// Instance identifies the run of the member's daemon.
	Instance datagram.InstanceID
	// DataAddr is the member's unicast UDP data address (zero if none).
	DataAddr netip.AddrPort
	// GossipAddr is the member's memberlist address.
	GossipAddr netip.AddrPort
}

// member is the bookkeeping of one remote member.
type member struct {
	Member
	leaving bool
}

// Membership is this node's part in the rsbd cluster: it runs memberlist,
// reports members joining, leaving and failing, and gossips which groups each
// node wants. It is safe for concurrent use.
type Membership struct {
	name     string
	instance datagram.InstanceID
	dataAddr atomic.Pointer[netip.AddrPort]
	log      *slog.Logger
	maxPeers int

	ml        *memberlist.Memberlist
	transport *stoppableTransport // Close aborts its dials first
	queue     *memberlist.TransmitLimitedQueue
	local     *group.LocalSet
	interest  *group.Interest
	stats     counters
	leaving   atomic.Bool

	mu         sync.Mutex // guards members and pending; taken before the Interest lock
	members    map[string]*member
	senders    atomic.Pointer[map[datagram.InstanceID]string] // instance -> name, rebuilt from members
	keyring    *memberlist.Keyring                            // nil without keys
	pending    map[string]group.PeerState
	numMembers atomic.Int64

	acks      pushAcks // confirmations of pushed states (PushLocal)
	direct    directPushes
	pubMu     sync.Mutex // serializes publishing of the local state
	published uint64
	ownState  atomic.Pointer[ownState]

	evMu     sync.Mutex // guards sending on and closing events
	evClosed bool
	events   chan Event

	life       sync.RWMutex // Join and Leave hold it shared, Close exclusively
	closed     bool
	joining    atomic.Bool   // the join loop was started
	joinEnded  chan struct{} // closed when the join loop returns; set by StartJoining
	joinRetry  time.Duration
	joinMax    time.Duration
	pushSignal chan struct{}
	stop       chan struct{}
	wg         sync.WaitGroup
}

// ownState is the latest published local state and its encodings, made
// on first use: with deltas, most versions of a large state are never
// sent whole.
type ownState struct {
	state group.PeerState
	name  string // this node's, which the messages carry
	size  int    // the length of either message
	once  sync.Once
	enc   []byte // msgState
	push  []byte // the same as msgStatePush: the receiver confirms it
}

// msg returns the state as a msgState.
func (o *ownState) msg() []byte { o.encode(); return o.enc }

// pushMsg returns the state as a msgStatePush.
func (o *ownState) pushMsg() []byte { o.encode(); return o.push }

func (o *ownState) encode() {
	o.once.Do(func() {
		// publish checked the group count; the groups come sorted and the
		// name was checked at start, so encoding cannot fail.
		o.enc, _ = appendStateMsg(make([]byte, 0, o.size), o.name, &o.state)
		o.push = slices.Clone(o.enc)
		if len(o.push) > 0 {
			o.push[0] = msgStatePush
		}
	})
}

// New starts memberlist with cfg and the local node's state, and starts the
// join loop on the seeds of cfg.Join if any (StartJoining).
func New(cfg Config, local LocalState) (*Membership, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newMembership(cfg, local)
	if err != nil {
		return nil, err
	}
	mc := cfg.memberlistConfig()
	mc.Logger = newCountingLogger(cfg.Logger, &m.stats.gossipMalformed)
	mc.Delegate = (*delegate)(m)
	mc.Events = (*eventDelegate)(m)
	if m.keyring, err = newKeyring(cfg.Keys); err != nil {
		return nil, err
	}
	if m.keyring != nil {
		mc.Keyring = m.keyring
		mc.GossipVerifyIncoming, mc.GossipVerifyOutgoing = true, true
	}
	mc.Conflict = (*eventDelegate)(m)
	m.queue = &memberlist.TransmitLimitedQueue{
		NumNodes:       func() int { return int(m.numMembers.Load()) + 1 },
		RetransmitMult: mc.RetransmitMult,
	}
	m.publish()
	if m.transport, err = newStoppableTransport(mc); err != nil {
		return nil, err
	}
	mc.Transport = m.transport
	if m.ml, err = memberlist.Create(mc); err != nil {
		m.transport.abort()
		_ = m.transport.Shutdown()
		return nil, fmt.Errorf("membership: start memberlist: %w", err)
	}
	m.resolveDataAddr()
	m.wg.Add(1)
	go m.pushLoop()
	m.log.Info("membership started", "node", m.name, "gossip", m.GossipAddr(), "instance", fmt.Sprintf("%x", m.instance[:]))
	if err := m.StartJoining(cfg.Join); err != nil {
		_ = m.Close()
		return nil, err
	}
	return m, nil
}

// newMembership builds the Membership state before memberlist starts.
func newMembership(cfg Config, local LocalState) (*Membership, error) {
	ls, err := group.NewLocalSet(cfg.Group)
	if err != nil {
		return nil, err
	}
	if _, err := ls.Set(local.Groups); err != nil {
		return nil, fmt.Errorf("membership: initial groups: %w", err)
	}
	in, err := group.NewInterest(cfg.Group)
	if err != nil {
		return nil, err
	}
	if local.Instance == (datagram.InstanceID{}) {
		_, _ = rand.Read(local.Instance[:]) // crypto/rand.Read never fails
	}
	m := &Membership{
		name:       cfg.NodeName,
		instance:   local.Instance,
		log:        cfg.Logger,
		maxPeers:   cmp.Or(cfg.Group.MaxPeers, group.DefaultMaxPeers),
		local:      ls,
		interest:   in,
		members:    make(map[string]*member),
		pending:    make(map[string]group.PeerState),
		events:     make(chan Event, EventQueueDepth),
		pushSignal: make(chan struct{}, 1),
		stop:       make(chan struct{}),
		joinRetry:  cfg.JoinRetry,
		joinMax:    cfg.JoinRetryMax,
	}
	m.dataAddr.Store(&local.DataAddr)
	m.acks.version = map[string]uint64{}
	m.direct.version = map[string]uint64{}
	m.acks.changed = make(chan struct{})
	return m, nil
}

// Join contacts the given seeds ("host" or "host:port") and merges state
// with them. It returns how many were reached; an error means none was.
func (m *Membership) Join(seeds []string) (int, error) {
	m.life.RLock()
	defer m.life.RUnlock()
	if m.closed {
		return 0, ErrClosed
	}
	n, err := m.ml.Join(seeds)
	if err != nil {
		return n, fmt.Errorf("membership: join %s: %w", strings.Join(seeds, ","), err)
	}
	return n, nil
}

// Leave announces that this node leaves on purpose, so that peers report a
// leave rather than a failure, and waits up to timeout for the announcement
// to go out. The node keeps running until Close.
func (m *Membership) Leave(timeout time.Duration) error {
	m.life.RLock()
	defer m.life.RUnlock()
	if m.closed {
		return ErrClosed
	}
	deadline := time.Now().Add(timeout)
	m.leaving.Store(true)
	m.announceLeaving()
	if err := m.ml.UpdateNode(timeout); err != nil && !m.nobodyToTell("announce leave", err) {
		return fmt.Errorf("membership: announce leave: %w", err)
	}
	left := time.Until(deadline)
	if left <= 0 {
		left = time.Millisecond
	}
	if err := m.ml.Leave(left); err != nil && !m.nobodyToTell("leave", err) {
		return fmt.Errorf("membership: leave: %w", err)
	}
	return nil
}

// nobodyToTell reports whether every peer this node knows has announced
// that it is leaving too (or none is left), and if so logs the failed step
// of a leave at info level: when daemons stop together the broadcast has no
// one to reach, which is normal rather than an error.
func (m *Membership) nobodyToTell(step string, err error) bool {
	m.mu.Lock()
	staying := 0
	for name, mb := range m.members {
		if name != m.name && !mb.leaving {
			staying++
		}
	}
	m.mu.Unlock()
	if staying > 0 {
		return false
	}
	m.log.Info("membership: no peer left to tell of the leave", "step", step, "err", err)
	return true
}

// announceLeaving tells every member directly that this node is leaving on
// purpose. It is best effort (UDP); the leaving flag in the node metadata,
// gossiped next, is the second path.
func (m *Membership) announceLeaving() {
	msg, err := appendLeavingMsg(nil, m.name, m.instance)
	if err != nil {
		return // cannot happen: the name was validated
	}
	for _, n := range m.peerNodes() {
		_ = m.ml.SendBestEffort(n, msg) // a lost notice turns the leave into a failure report
	}
}

// Close stops memberlist without announcing a leave (call Leave first for a
// graceful exit), stops the background work and closes the Events channel.
// It is idempotent.
func (m *Membership) Close() error {
	// A join or push under way ends now rather than at its TCP timeout;
	// the join loop holds life shared while it joins.
	m.transport.abort()
	m.life.Lock()
	defer m.life.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	close(m.stop)
	err := m.ml.Shutdown()
	m.wg.Wait()
	m.evMu.Lock()
	m.evClosed = true
	close(m.events)
	m.evMu.Unlock()
	if err != nil {
		return fmt.Errorf("membership: shutdown: %w", err)
	}
	return nil
}

// Name returns this node's name.
func (m *Membership) Name() string { return m.name }

// Instance returns this node's instance id.
func (m *Membership) Instance() datagram.InstanceID { return m.instance }

// GossipAddr returns the address memberlist advertises for this node, with
// the port it actually bound (useful with AnyPort).
func (m *Membership) GossipAddr() netip.AddrPort {
	n := m.ml.LocalNode()
	a, _ := netip.AddrFromSlice(n.Addr)
	return netip.AddrPortFrom(a.Unmap(), n.Port)
}

// DataAddr returns the unicast data address advertised to peers.
func (m *Membership) DataAddr() netip.AddrPort { return *m.dataAddr.Load() }

// resolveDataAddr replaces an unspecified data IP (data bound to all
// addresses) by the address memberlist advertises, so peers get an address
// they can reach, and republishes the node's meta and state. It runs before
// any join, so no peer has seen the unspecified address.
func (m *Membership) resolveDataAddr() {
	da := m.DataAddr()
	if !da.IsValid() || !da.Addr().IsUnspecified() {
		return
	}
	resolved := netip.AddrPortFrom(m.GossipAddr().Addr(), da.Port())
	m.dataAddr.Store(&resolved)
	if err := m.ml.UpdateNode(time.Second); err != nil {
		m.log.Warn("membership: cannot update node meta", "err", err)
	}
	m.pubMu.Lock()
	m.published = 0
	m.pubMu.Unlock()
	m.publish()
}

// Members returns the remote members currently alive, sorted by name.
func (m *Membership) Members() []Member {
	m.mu.Lock()
	out := make([]Member, 0, len(m.members))
	for _, mb := range m.members {
		out = append(out, mb.Member)
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Events returns the channel of member events. Read it promptly: events that
// find its buffer (EventQueueDepth) full are dropped and counted. It is
// closed by Close.
func (m *Membership) Events() <-chan Event { return m.events }

// Interest returns the read-only, thread-safe table of which remote peer
// wants which group.
func (m *Membership) Interest() group.InterestReader { return m.interest }

// SetLocalGroups replaces the groups this node wants (one reference each)
// and gossips the change.
func (m *Membership) SetLocalGroups(ids []group.GroupID) error {
	changed, err := m.local.Set(ids)
	if err != nil {
		return fmt.Errorf("membership: %w", err)
	}
	if changed {
		m.publish()
	}
	return nil
}

// AddLocalGroup takes a reference on group id for this node and gossips the
// change if the group is new.
func (m *Membership) AddLocalGroup(id group.GroupID) error {
	changed, err := m.local.Add(id)
	if err != nil {
		return fmt.Errorf("membership: %w", err)
	}
	if changed {
		m.publish()
	}
	return nil
}

// RemoveLocalGroup drops a reference on group id and gossips the change if it
// was the last one.
func (m *Membership) RemoveLocalGroup(id group.GroupID) {
	if m.local.Remove(id) {
		m.publish()
	}
}

// LocalGroups returns the groups this node wants, ascending.
func (m *Membership) LocalGroups() []group.GroupID {
	return m.local.Snapshot(m.instance, m.DataAddr()).Groups
}

// LocalVersion returns the version of this node's interest state.
func (m *Membership) LocalVersion() uint64 { return m.local.Version() }
