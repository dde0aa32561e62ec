package group

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/transport/datagram"
)

// Errors of Interest.Update. ErrStale and ErrDeparted are routine outcomes of
// gossip (an old or repeated state); the others mean a limit was hit.
var (
	// ErrStale: the state is not newer than the one held for the same instance.
	ErrStale = errors.New("group: stale peer state")
	// ErrDeparted: the state's instance has left or been replaced.
	ErrDeparted = errors.New("group: peer instance has departed")
	// ErrTooManyPeers: the table already holds MaxPeers peers.
	ErrTooManyPeers = errors.New("group: too many peers")
	// ErrTooManyGroups: a state or the local set exceeds MaxGroupsPerPeer.
	ErrTooManyGroups = errors.New("group: too many groups")
	// ErrInvalidPeer: the peer name is empty.
	ErrInvalidPeer = errors.New("group: invalid peer name")
)

// PeerAddr names a remote peer that wants a group, for unicast fan-out.
type PeerAddr struct {
	// Name is the peer's memberlist node name.
	Name string
	// Instance is the run of the peer's daemon.
	Instance datagram.InstanceID
	// Addr is the peer's unicast UDP data address (zero if it has none).
	Addr netip.AddrPort
}

// InterestReader is the read-only view of an Interest table; see the
// methods of Interest for each one's contract.
type InterestReader interface {
	// Wanted reports whether any remote peer wants group id.
	Wanted(id GroupID) bool
	// Peers returns the peers wanting group id (shared, read-only).
	Peers(id GroupID) []PeerAddr
	// AppendPeers appends the peers wanting group id to dst.
	AppendPeers(dst []PeerAddr, id GroupID) []PeerAddr
	// Peer returns a copy of the state held for peer name.
	Peer(name string) (PeerState, bool)
	// PeerNames returns the names of all peers, sorted.
	PeerNames() []string
	// Len returns the number of peers.
	Len() int
	// NumGroups returns the number of distinct groups some peer wants.
	NumGroups() int
	// Range calls fn for every peer until fn returns false.
	Range(fn func(name string, st *PeerState) bool)
	Generation() uint64
}

// Interest is the table of remote peers and the groups they want. It is safe
// for concurrent use; reads take a shared lock and do not allocate.
//
// Update applies a peer's full state only when it is newer: a higher version
// of the same instance, or a different instance (the peer's daemon
// restarted), which retires the old instance. Retired and removed instances
// are remembered (up to MaxTombstones) and their states refused afterwards.
// Callers that learn the current instance of each peer from elsewhere (its
// membership metadata) should drop states of other instances before Update.
type Interest struct {
	maxPeers, maxGroups int

	gen     atomic.Uint64 // bumped by every change (Generation)
	npeers  atomic.Int64  // len(peers), for Len without the lock
	mu      sync.RWMutex
	peers   map[string]*peerEntry
	byGroup map[GroupID][]PeerAddr // copy-on-write: a stored slice is never modified, cap == len
	tomb    tombstones
}

var _ InterestReader = (*Interest)(nil)

// peerEntry is what the table holds for one peer.
type peerEntry struct {
	addr  PeerAddr
	state PeerState // Groups ascending and owned by the table
}

// NewInterest returns an empty table with the limits of cfg (defaults
// applied), or an error wrapping ErrConfig.
func NewInterest(cfg Config) (*Interest, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Interest{
		maxPeers:  cfg.MaxPeers,
		maxGroups: cfg.MaxGroupsPerPeer,
		peers:     make(map[string]*peerEntry),
		byGroup:   make(map[GroupID][]PeerAddr),
	}, nil
}

// Generation returns a number that changes whenever the table changes, so
// that readers can cache what they derived from it.
func (in *Interest) Generation() uint64 { return in.gen.Load() }

// Update replaces the state of peer name with st if st is newer (see
// Interest). It returns nil when st was applied, or an error wrapping
// ErrStale, ErrDeparted, ErrTooManyPeers, ErrTooManyGroups or ErrInvalidPeer.
// st.Groups need not be sorted; the table keeps its own sorted copy.
func (in *Interest) Update(name string, st PeerState) error {
	if name == "" {
		return ErrInvalidPeer
	}
	if len(st.Groups) > in.maxGroups {
		return fmt.Errorf("%w: peer %s wants %d, limit %d", ErrTooManyGroups, name, len(st.Groups), in.maxGroups)
	}
	st.Groups = slices.Clone(st.Groups)
	if !groupsAscending(st.Groups) {
		st.Groups = slices.Clip(SortGroups(st.Groups))
	}
	addr := PeerAddr{Name: name, Instance: st.Instance, Addr: st.Addr}

	in.mu.Lock()
	defer in.changed()
	if in.tomb.has(st.Instance) {
		return fmt.Errorf("%w: peer %s", ErrDeparted, name)
	}
	e := in.peers[name]
	switch {
	case e == nil:
		if len(in.peers) >= in.maxPeers {
			return fmt.Errorf("%w: limit %d", ErrTooManyPeers, in.maxPeers)
		}
		in.peers[name] = &peerEntry{addr: addr, state: st}
		in.addGroups(addr, st.Groups)
	case e.state.Instance != st.Instance:
		in.tomb.add(e.state.Instance)
		in.replace(e, addr, st)
	case st.Version <= e.state.Version:
		return fmt.Errorf("%w: peer %s version %d, have %d", ErrStale, name, st.Version, e.state.Version)
	case e.addr.Addr != st.Addr:
		in.replace(e, addr, st)
	default:
		in.diff(addr, e.state.Groups, st.Groups)
		e.state = st
	}
	return nil
}

// RemovePeer removes peer name and retires its instance (the peer left:
// that instance never comes back). It returns the removed state and
// whether the peer was present.
func (in *Interest) RemovePeer(name string) (PeerState, bool) { return in.remove(name, true) }

// ForgetPeer removes peer name without retiring its instance: a peer
// declared failed may be alive behind a partition or a paused process,
// and its state is taken again when the membership sees it alive.
func (in *Interest) ForgetPeer(name string) (PeerState, bool) { return in.remove(name, false) }

// remove removes peer name, retiring its instance if retire is set.
func (in *Interest) remove(name string, retire bool) (PeerState, bool) {
	in.mu.Lock()
	defer in.changed()
	e, ok := in.peers[name]
	if !ok {
		return PeerState{}, false
	}
	delete(in.peers, name)
	if retire {
		in.tomb.add(e.state.Instance)
	}
	for _, id := range e.state.Groups {
		in.removeFrom(id, name)
	}
	return e.state, true
}

// Departed reports whether instance has been retired by RemovePeer or by a
// newer instance of the same peer.
func (in *Interest) Departed(instance datagram.InstanceID) bool {
	in.mu.RLock()
	defer in.mu.RUnlock()
	return in.tomb.has(instance)
}

// Wanted reports whether any remote peer wants group id.
func (in *Interest) Wanted(id GroupID) bool {
	in.mu.RLock()
	defer in.mu.RUnlock()
	return len(in.byGroup[id]) > 0
}

// Peers returns the peers that want group id. The slice is shared and must
// not be modified; it stays valid (and unchanged) after later updates.
func (in *Interest) Peers(id GroupID) []PeerAddr {
	in.mu.RLock()
	defer in.mu.RUnlock()
	return in.byGroup[id]
}

// AppendPeers appends the peers that want group id to dst.
func (in *Interest) AppendPeers(dst []PeerAddr, id GroupID) []PeerAddr {
	return append(dst, in.Peers(id)...)
}

// Peer returns a copy of the state held for peer name.
func (in *Interest) Peer(name string) (PeerState, bool) {
	in.mu.RLock()
	defer in.mu.RUnlock()
	e, ok := in.peers[name]
	if !ok {
		return PeerState{}, false
	}
	st := e.state
	st.Groups = slices.Clone(st.Groups)
	return st, true
}

// PeerNames returns the names of all peers in the table, sorted.
func (in *Interest) PeerNames() []string {
	in.mu.RLock()
	names := make([]string, 0, len(in.peers))
	for name := range in.peers {
		names = append(names, name)
	}
	in.mu.RUnlock()
	slices.Sort(names)
	return names
}

// Len returns the number of peers in the table.
// It reads an atomic copy, without the lock (publishers ask per event).
func (in *Interest) Len() int { return int(in.npeers.Load()) }

// changed publishes the peer count and bumps the generation, then unlocks;
// mutators defer it right after taking the lock.
func (in *Interest) changed() {
	in.npeers.Store(int64(len(in.peers)))
	in.gen.Add(1)
	in.mu.Unlock()
}

// NumGroups returns the number of distinct groups some peer wants.
func (in *Interest) NumGroups() int {
	in.mu.RLock()
	defer in.mu.RUnlock()
	return len(in.byGroup)
}

// Range calls fn for every peer until fn returns false. It holds the table's
// read lock: fn must not modify st or call methods that change the table.
func (in *Interest) Range(fn func(name string, st *PeerState) bool) {
	in.mu.RLock()
	defer in.mu.RUnlock()
	for name, e := range in.peers {
		if !fn(name, &e.state) {
			return
		}
	}
}

// replace swaps the whole state of e, re-indexing every group.
func (in *Interest) replace(e *peerEntry, addr PeerAddr, st PeerState) {
	for _, id := range e.state.Groups {
		in.removeFrom(id, e.addr.Name)
	}
	e.addr, e.state = addr, st
	in.addGroups(addr, st.Groups)
}

// addGroups indexes addr under every id of ids.
func (in *Interest) addGroups(addr PeerAddr, ids []GroupID) {
	for _, id := range ids {
		in.addTo(id, addr)
	}
}

// diff re-indexes a peer whose address is unchanged from groups from to to
// (both ascending), touching only the groups that differ.
func (in *Interest) diff(addr PeerAddr, from, to []GroupID) {
	i, j := 0, 0
	for i < len(from) || j < len(to) {
		c := 0
		switch {
		case i == len(from):
			c = 1
		case j == len(to):
			c = -1
		default:
			c = CompareIDs(from[i], to[j])
		}
		switch {
		case c < 0:
			in.removeFrom(from[i], addr.Name)
			i++
		case c > 0:
			in.addTo(to[j], addr)
			j++
		default:
			i++
			j++
		}
	}
}

// addTo stores a new slice for id with addr appended.
func (in *Interest) addTo(id GroupID, addr PeerAddr) {
	old := in.byGroup[id]
	s := make([]PeerAddr, len(old), len(old)+1)
	copy(s, old)
	in.byGroup[id] = append(s, addr)
}

// removeFrom stores a new slice for id without peer name (or drops id).
func (in *Interest) removeFrom(id GroupID, name string) {
	old := in.byGroup[id]
	if len(old) <= 1 {
		if len(old) == 1 && old[0].Name == name {
			delete(in.byGroup, id)
		}
		return
	}
	s := make([]PeerAddr, 0, len(old)-1)
	for _, pa := range old {
		if pa.Name != name {
			s = append(s, pa)
		}
	}
	in.byGroup[id] = slices.Clip(s)
}

// tombstones is a bounded set of retired instance ids; the oldest is
// forgotten first.
type tombstones struct {
	set  map[datagram.InstanceID]struct{}
	ring []datagram.InstanceID
	next int
}

// has reports whether id is retired.
func (t *tombstones) has(id datagram.InstanceID) bool {
	_, ok := t.set[id]
	return ok
}

// add retires id. The zero id is never retired.
func (t *tombstones) add(id datagram.InstanceID) {
	if id == (datagram.InstanceID{}) || t.has(id) {
		return
	}
	if t.set == nil {
		t.set = make(map[datagram.InstanceID]struct{})
	}
	if len(t.ring) < MaxTombstones {
		t.ring = append(t.ring, id)
	} else {
		delete(t.set, t.ring[t.next])
		t.ring[t.next] = id
		t.next = (t.next + 1) % MaxTombstones
	}
	t.set[id] = struct{}{}
}
