package faultnet

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

// ErrAddressInUse means Listen was given an address another endpoint holds.
var ErrAddressInUse = errors.New("faultnet: address in use")

// Config configures a Network. The zero value is a perfect network seeded
// with 0.
type Config struct {
	// Seed makes every random decision reproducible.
	Seed uint64
	// Faults apply to every link without its own (see SetLink).
	Faults Faults
	// Loop delivers a multicast datagram to its sender too if the sender
	// joined the group, as real multicast with IP_MULTICAST_LOOP and
	// transport.Config.ReceiveOwn does.
	Loop bool
	// MaxDatagram is the largest datagram Send accepts; 0 means
	// transport.DefaultMaxDatagram.
	MaxDatagram int
	// QueueLimit bounds the datagrams waiting for one endpoint's Handler;
	// 0 means DefaultQueueLimit.
	QueueLimit int
}

// Validate reports the first field out of range, wrapping ErrConfig.
func (c Config) Validate() error {
	if c.MaxDatagram < 0 || c.MaxDatagram > datagram.MaxDatagramSize {
		return fmt.Errorf("%w: MaxDatagram %d", ErrConfig, c.MaxDatagram)
	}
	if c.QueueLimit < 0 {
		return fmt.Errorf("%w: QueueLimit %d", ErrConfig, c.QueueLimit)
	}
	return c.Faults.Validate()
}

// Stats count what happened to datagrams, one per (datagram, receiver).
type Stats struct {
	// Sent counts datagrams offered to a link.
	Sent uint64
	// Delivered counts datagrams (duplicates included) queued for the
	// receiver's Handler.
	Delivered uint64
	// Lost and BurstLost count datagrams dropped by random and by burst loss.
	Lost, BurstLost uint64
	// Duplicated counts datagrams sent twice.
	Duplicated uint64
	// Reordered counts datagrams held back by ReorderDelay.
	Reordered uint64
	// BlackedOut counts datagrams dropped because an end was blacked out.
	BlackedOut uint64
	// QueueDrops counts datagrams dropped because the receiver's queue was
	// full.
	QueueDrops uint64
	// NoRoute counts unicast datagrams to an address no endpoint holds.
	NoRoute uint64
}

func (s *Stats) add(o *Stats) {
	s.Sent += o.Sent
	s.Delivered += o.Delivered
	s.Lost += o.Lost
	s.BurstLost += o.BurstLost
	s.Duplicated += o.Duplicated
	s.Reordered += o.Reordered
	s.BlackedOut += o.BlackedOut
	s.QueueDrops += o.QueueDrops
	s.NoRoute += o.NoRoute
}

type linkKey struct{ from, to netip.AddrPort }

// Network is an in-memory datagram network. All methods are safe for
// concurrent use.
type Network struct {
	cfg Config

	mu        sync.Mutex
	endpoints map[netip.AddrPort]*Endpoint
	// members of each group, sorted by address so delivery order does not
	// depend on join order or map iteration.
	groups    map[netip.AddrPort][]*Endpoint
	links     map[linkKey]*link
	overrides map[linkKey]*Faults
	blackout  map[netip.AddrPort]time.Time // cut off until
	noRoute   uint64
	next      uint32 // address counter of Listen
}

// New returns a Network.
func New(cfg Config) (*Network, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxDatagram == 0 {
		cfg.MaxDatagram = transport.DefaultMaxDatagram
	}
	if cfg.QueueLimit == 0 {
		cfg.QueueLimit = DefaultQueueLimit
	}
	return &Network{cfg: cfg, endpoints: map[netip.AddrPort]*Endpoint{},
		groups: map[netip.AddrPort][]*Endpoint{}, links: map[linkKey]*link{},
		overrides: map[linkKey]*Faults{}, blackout: map[netip.AddrPort]time.Time{}}, nil
}

// Listen creates an endpoint at addr, or at a fresh address 10.0.x.y:5000
// if addr is the zero value, delivering its datagrams to h. In a synctest
// bubble, call it inside the bubble.
func (n *Network) Listen(addr netip.AddrPort, h transport.Handler) (*Endpoint, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: nil Handler", ErrConfig)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if !addr.IsValid() {
		for !addr.IsValid() || n.endpoints[addr] != nil {
			n.next++
			addr = netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(n.next >> 16), byte(n.next >> 8), byte(n.next)}), DefaultPort)
		}
	}
	a, err := transport.CheckDest(addr)
	if err != nil || a.Addr().IsMulticast() {
		return nil, fmt.Errorf("faultnet: listen on %v: %w", addr, transport.ErrAddress)
	}
	if n.endpoints[a] != nil {
		return nil, fmt.Errorf("%w: %v", ErrAddressInUse, a)
	}
	e := newEndpoint(n, a, h)
	n.endpoints[a] = e
	return e, nil
}

// SetFaults replaces the faults of every link without its own.
func (n *Network) SetFaults(f Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cfg.Faults = f
	return nil
}

// SetLink sets the faults of the direction from -> to (unicast addresses),
// overriding the network's. ClearLink removes the override.
func (n *Network) SetLink(from, to netip.AddrPort, f Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.overrides[linkKey{from, to}] = &f
	return nil
}

// ClearLink makes the direction from -> to use the network's faults again.
func (n *Network) ClearLink(from, to netip.AddrPort) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.overrides, linkKey{from, to})
}

// Blackout cuts the endpoint at addr off for d from now: datagrams it sends
// and datagrams arriving for it (also those already in flight) are
// dropped. A later call replaces the interval; d <= 0 ends it.
func (n *Network) Blackout(addr netip.AddrPort, d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if d <= 0 {
		delete(n.blackout, addr)
		return
	}
	n.blackout[addr] = time.Now().Add(d)
}

// Stats returns the counters summed over all links.
func (n *Network) Stats() Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := Stats{NoRoute: n.noRoute}
	for _, l := range n.links {
		s.add(&l.stats)
	}
	return s
}

// LinkStats returns the counters of the direction from -> to.
func (n *Network) LinkStats(from, to netip.AddrPort) Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	if l := n.links[linkKey{from, to}]; l != nil {
		return l.stats
	}
	return Stats{}
}

// blackedOut reports whether addr is cut off at now. Caller holds n.mu.
func (n *Network) blackedOut(addr netip.AddrPort, now time.Time) bool {
	until, ok := n.blackout[addr]
	return ok && now.Before(until)
}

// link returns the state of from -> to, creating it. Caller holds n.mu.
func (n *Network) link(from, to netip.AddrPort) *link {
	k := linkKey{from, to}
	l := n.links[k]
	if l == nil {
		l = newLink(n.cfg.Seed, from, to)
		n.links[k] = l
	}
	return l
}

// receivers returns the endpoints a datagram from src to dst reaches.
// Caller holds n.mu.
func (n *Network) receivers(src *Endpoint, dst netip.AddrPort, buf []*Endpoint) []*Endpoint {
	if dst.Addr().IsMulticast() {
		for _, e := range n.groups[dst] {
			if e != src || n.cfg.Loop {
				buf = append(buf, e)
			}
		}
		return buf
	}
	if e := n.endpoints[dst]; e != nil {
		return append(buf, e)
	}
	n.noRoute++
	return buf
}

// transmit sends one datagram over the link src -> dst. Caller holds n.mu.
func (n *Network) transmit(src, dst *Endpoint, b []byte, now time.Time, delays []time.Duration) []time.Duration {
	l := n.link(src.addr, dst.addr)
	l.stats.Sent++
	if n.blackedOut(src.addr, now) || n.blackedOut(dst.addr, now) {
		l.stats.BlackedOut++
		return delays
	}
	f := &n.cfg.Faults
	if o := n.overrides[linkKey{src.addr, dst.addr}]; o != nil {
		f = o
	}
	delays = l.fate(f, delays[:0])
	for _, d := range delays {
		dst.schedule(l, transport.Packet{Data: slices.Clone(b), From: src.addr}, now.Add(d), now)
	}
	return delays
}

// join adds e to the group's members. Caller holds n.mu.
func (n *Network) join(e *Endpoint, g netip.AddrPort) {
	ms := n.groups[g]
	i, found := slices.BinarySearchFunc(ms, e.addr, func(m *Endpoint, a netip.AddrPort) int { return m.addr.Compare(a) })
	if !found {
		n.groups[g] = slices.Insert(ms, i, e)
	}
}

// leave removes e from the group's members. Caller holds n.mu.
func (n *Network) leave(e *Endpoint, g netip.AddrPort) {
	ms := slices.DeleteFunc(n.groups[g], func(m *Endpoint) bool { return m == e })
	if len(ms) == 0 {
		delete(n.groups, g)
	} else {
		n.groups[g] = ms
	}
}
