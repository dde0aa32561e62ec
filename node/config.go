package node

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/group/membership"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

// ErrConfig is wrapped by every error Config.Validate returns.
var ErrConfig = errors.New("node: invalid config")

// QoS is an RSB quality-of-service pair.
type QoS struct {
	// Reliable asks for repair of lost datagrams (RSB RELIABLE).
	Reliable bool
	// Ordered asks for delivery in publish order per sender (RSB ORDERED).
	Ordered bool
}

// Class returns the stream class of q.
func (q QoS) Class() datagram.Class {
	switch {
	case q.Reliable && q.Ordered:
		return datagram.ReliableOrdered
	case q.Reliable:
		return datagram.ReliableUnordered
	case q.Ordered:
		return datagram.UnreliableOrdered
	}
	return datagram.UnreliableUnordered
}

// ScopeQoS overrides the QoS of a scope and its sub-scopes.
type ScopeQoS struct {
	Scope scope.Scope
	QoS   QoS
}

// Config configures a Node. The zero value runs a single-host daemon with
// RSB's defaults; DefaultConfig shows what the zero fields stand for.
type Config struct {
	// Name is the memberlist node name; empty picks hostname + random suffix.
	Name string
	// SocketAddr is the RSB socket server address; "off" disables it.
	SocketAddr string
	// SocketPath, if set, is a Unix domain socket the socket server also
	// serves (the same protocol; local clients dial "unix:PATH"). A stale
	// socket file is replaced, a live one is an error; the file gets
	// SocketMode and is removed when the node closes.
	SocketPath string
	// SocketMode is the permission of the SocketPath file: who may write
	// to it may connect. Zero means 0666, every local user, as every local
	// user may reach the TCP port; 0660 keeps it to the daemon's user and
	// group.
	SocketMode fs.FileMode
	// GossipAddr is the memberlist bind address (host:port).
	GossipAddr string
	// AdvertiseAddr is the memberlist address told to peers, if not GossipAddr.
	AdvertiseAddr string
	// DataAddr is the unicast UDP address for data, NACKs and repairs.
	DataAddr string
	// Join lists peers' gossip addresses. The node contacts them in the
	// background once it serves, and again whenever it has no peer
	// (membership.StartJoining; Membership.JoinRetry and JoinRetryMax set
	// the pace).
	Join []string
	// Keys, if any, seal the data plane and the gossip: every datagram is
	// sealed with the first key (AES-256-GCM) and only datagrams sealed
	// with one of them, by a cluster member, not replayed, are accepted;
	// gossip is encrypted with the same keys. Node.SetKeys replaces them
	// while running. Without keys anyone who can reach the node's ports
	// can publish and read events.
	Keys []datagram.Key
	// ClusterLabel names the cluster: gossip and sealed datagrams of
	// another label are refused. At most 255 bytes.
	ClusterLabel string
	// Unicast turns multicast off: datagrams go to each interested peer.
	Unicast bool
	// Interface is the multicast interface; empty means loopback.
	Interface string
	// MaxDatagram is the datagram size; 0 picks by interface (params.go).
	MaxDatagram int
	// QoS is the QoS of events published through this node. RSB's default,
	// unordered+reliable, applies unless ExplicitQoS is set; the zero QoS
	// (unreliable, unordered) is honoured only with ExplicitQoS.
	QoS QoS
	// ExplicitQoS says QoS was set on purpose (otherwise the RSB default).
	ExplicitQoS bool
	// ScopeQoS overrides QoS by scope; the longest matching scope wins.
	ScopeQoS []ScopeQoS
	// LocalProfile uses memberlist's fast loopback timings (tests, laptops).
	LocalProfile bool
	// Socket configures the RSB socket server (Addr is set from SocketAddr).
	Socket rsbsocket.Config
	// Group configures the multicast address pool and interest bounds.
	Group group.Config
	// Membership tunes memberlist; the address fields come from above.
	Membership membership.Config
	// Transport tunes the UDP sockets; Listen, Interface and MaxDatagram
	// come from above.
	Transport transport.Config
	// Streams configures the qos stream machines.
	Streams qos.Config
	// Assembly configures the reassembly of fragmented events; its Timeout
	// is replaced per class by the params.go timeouts when zero, the
	// reliable streams' MaxPartialEvents by DefaultReliablePartialEvents
	// when zero, and its Alloc by the node's pool of reassembly buffers.
	Assembly fragmentation.Config
	// PublishQueue, PublishQueueBytes, ReceiveQueue, ReceiveQueueBytes,
	// MaxSenders: see params.go; 0 = default.
	PublishQueue, PublishQueueBytes, ReceiveQueue, ReceiveQueueBytes, MaxSenders int
	// ShutdownFlush bounds the reliable flush at Close; 0 = default.
	ShutdownFlush time.Duration
	// InterestBarrier bounds how long a new listener's announcement (or an
	// embedded Subscribe) waits for the peers to be told; 0 = default.
	InterestBarrier time.Duration
	// InterestLinger is how long a scope no local sink wants any more is
	// still received (peers keep sending until they learn the change);
	// 0 = default.
	InterestLinger time.Duration
	// NewConn opens the datagram network; nil means transport.Open (real
	// UDP sockets). Tests pass a fault-injecting network here.
	NewConn func(transport.Config, transport.Handler) (transport.Conn, error)
	// OnLoss, if set, is told of every unrecoverable loss (on the goroutine
	// that delivers network events, in order with them; see Handler).
	OnLoss func(LossReport)
	// Logger receives the node's logs; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the configuration the zero value stands for.
func DefaultConfig() Config {
	var c Config
	c.applyDefaults()
	return c
}

func (c *Config) applyDefaults() {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.SocketAddr, DefaultSocketAddr)
	def(&c.GossipAddr, DefaultGossipAddr)
	def(&c.DataAddr, DefaultDataAddr)
	if !c.ExplicitQoS {
		c.QoS = QoS{Reliable: true}
	}
	if c.MaxDatagram == 0 {
		c.MaxDatagram = DefaultLANDatagram
		if c.Interface == "" || c.Interface == "lo" {
			c.MaxDatagram = DefaultLoopbackDatagram
		}
	}
	defInt := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	defInt(&c.PublishQueue, DefaultPublishQueue)
	defInt(&c.PublishQueueBytes, DefaultPublishQueueBytes)
	defInt(&c.ReceiveQueue, DefaultReceiveQueue)
	defInt(&c.ReceiveQueueBytes, DefaultReceiveQueueBytes)
	defInt(&c.MaxSenders, DefaultMaxSenders)
	if c.Streams.Sender.HeartbeatMin == 0 {
		c.Streams.Sender.HeartbeatMin = DefaultHeartbeatMin
	}
	if c.Streams.Sender.RetainBytes == 0 {
		c.Streams.Sender.RetainBytes = DefaultRetainBytes
	}
	defInt(&c.Streams.Receivers.Receiver.ReorderBytes, DefaultReorderBytes)
	defInt(&c.Streams.Receivers.Receiver.ReorderDatagrams, DefaultReorderDatagrams)
	if c.ShutdownFlush == 0 {
		c.ShutdownFlush = DefaultShutdownFlush
	}
	if c.InterestBarrier == 0 {
		c.InterestBarrier = DefaultInterestBarrier
	}
	if c.InterestLinger == 0 {
		c.InterestLinger = DefaultInterestLinger
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate reports whether c (with defaults applied) is usable.
func (c Config) Validate() error {
	c.applyDefaults()
	var errs []error
	if c.SocketAddr != "off" {
		if _, _, err := splitHostPort(c.SocketAddr); err != nil {
			errs = append(errs, fmt.Errorf("socket address: %w", err))
		}
	}
	if c.SocketMode&^fs.ModePerm != 0 {
		errs = append(errs, fmt.Errorf("socket mode %#o: permission bits only", uint32(c.SocketMode)))
	}
	if len(c.SocketPath) > maxSocketPath {
		errs = append(errs, fmt.Errorf("socket path: %d bytes, at most %d", len(c.SocketPath), maxSocketPath))
	}
	if _, _, err := splitHostPort(c.GossipAddr); err != nil {
		errs = append(errs, fmt.Errorf("gossip address: %w", err))
	}
	if _, err := netip.ParseAddrPort(c.DataAddr); err != nil {
		errs = append(errs, fmt.Errorf("data address: %w", err))
	}
	if c.MaxDatagram < 512 || c.MaxDatagram > datagram.MaxDatagramSize {
		errs = append(errs, fmt.Errorf("max datagram %d outside 512..%d", c.MaxDatagram, datagram.MaxDatagramSize))
	}
	if len(c.ClusterLabel) > datagram.MaxLabelSize {
		errs = append(errs, fmt.Errorf("cluster label longer than %d bytes", datagram.MaxLabelSize))
	}
	if len(c.Keys) > 0 {
		if _, err := datagram.NewSealer(c.ClusterLabel, c.Keys); err != nil {
			errs = append(errs, err)
		}
		if c.MaxDatagram < 512+datagram.SealOverhead {
			errs = append(errs, fmt.Errorf("max datagram %d below %d with keys (the seal takes %d bytes)",
				c.MaxDatagram, 512+datagram.SealOverhead, datagram.SealOverhead))
		}
	}
	if c.PublishQueue < 0 || c.PublishQueueBytes < 0 || c.ReceiveQueue < 0 || c.ReceiveQueueBytes < 0 || c.MaxSenders < 0 {
		errs = append(errs, errors.New("queue and sender bounds must not be negative"))
	}
	if err := c.Socket.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("socket server: %w", err))
	}
	for _, sq := range c.ScopeQoS {
		if sq.Scope.IsZero() {
			errs = append(errs, errors.New("scope QoS override without scope"))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// splitHostPort splits "host:port" and accepts ":port".
func splitHostPort(s string) (string, string, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", "", fmt.Errorf("%q has no port", s)
	}
	return s[:i], s[i+1:], nil
}

// qosFor returns the QoS of events on sc: the longest matching override, or
// the default.
func (c *Config) qosFor(sc scope.Scope) QoS {
	best, q := -1, c.QoS
	for _, o := range c.ScopeQoS {
		if n := len(o.Scope.String()); n > best && o.Scope.Contains(sc) {
			best, q = n, o.QoS
		}
	}
	return q
}
