package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/group/membership"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/node/engine"
	"github.com/rsbd/rsbd/node/interest"
	"github.com/rsbd/rsbd/node/sinks"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

// ErrClosed is returned by operations on a closed Node.
var ErrClosed = errors.New("node: closed")

// LossReport tells of datagrams of a remote stream that will never arrive.
type LossReport = qos.LossReport

// Node is one rsbd bus endpoint: local sinks (socket clients and embedded
// subscriptions), the stream engine and the network. Create it with New and
// release it with Close.
type Node struct {
	cfg      Config
	log      *slog.Logger
	instance datagram.InstanceID
	reg      *prometheus.Registry
	m        *metrics.Metrics
	pool     *group.Pool
	conn     transport.Conn
	reasm    fragmentation.ReassemblyPool // reassembly buffers back from borrowed deliveries
	slabs    fragmentation.RecordSlabs    // the records of small events published here
	ep       *transport.Endpoint
	guard    *transport.Guard // nil without keys
	mem      *membership.Membership
	sock     *rsbsocket.Server
	sockLn   net.Listener // TCP; nil when SocketAddr is "off"
	unixLn   net.Listener // nil without SocketPath
	sinks    *sinks.Table
	dq       deliverer
	eng      *engine.Engine
	// engineUp is set once eng, membership and the node's goroutines
	// exist: the transport's readers start before them (the engine sizes
	// its flow window from the socket), and a start that failed earlier
	// has no engine to flush through.
	engineUp atomic.Bool
	wanted   interest.WantedSet
	interest func() group.InterestReader

	accepted    atomic.Uint64 // socket connections already counted in the metrics
	interestSig chan struct{}
	interestMu  sync.Mutex
	lastGroups  []datagram.GroupID
	lastScopes  []scope.Scope
	lastIdx     lastIndex       // lastScopes indexed for addInterest
	linger      interest.Linger // narrowed-away scopes still received
	helloGen    atomic.Uint64   // socket interest generation the last Hello barrier covered
	confirmed   atomic.Uint64   // local interest version every peer confirmed
	joined      map[netip.AddrPort]bool
	scopes      *scopeTable // traffic by scope (ScopeCounts)
	stop        chan struct{}
	wg          sync.WaitGroup
	closeOnce   sync.Once
	closeErr    error
}

// New starts a node: UDP transport, memberlist, the engine and (unless
// disabled) the RSB socket server. reg may be nil for a private registry.
func New(cfg Config, reg *prometheus.Registry) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.applyDefaults()
	if reg == nil {
		reg = metrics.NewRegistry()
	}
	n := &Node{
		cfg:         cfg,
		log:         cfg.Logger,
		instance:    datagram.InstanceID(notification.NewParticipantID()),
		reg:         reg,
		m:           metrics.New(reg),
		sinks:       sinks.NewTable(),
		scopes:      newScopeTable(),
		interestSig: make(chan struct{}, 1),
		joined:      map[netip.AddrPort]bool{},
		stop:        make(chan struct{}),
	}
	n.wanted.Store(nil, nil)
	n.dq.bodies = bodyDecoder{dec: &n.dq.dec, slabs: &n.dq.slabs}
	if err := n.start(); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

func (n *Node) start() error {
	var err error
	if n.pool, err = group.NewPool(n.cfg.Group); err != nil {
		return err
	}
	if err = n.openTransport(); err != nil {
		return err
	}
	if n.eng, err = n.newEngine(); err != nil {
		return err
	}
	if err = n.openMembership(); err != nil {
		return err
	}
	n.registerCollectors()
	n.registerTransportCollector()
	n.registerMembershipCollector()
	n.registerEngineCollector()
	n.registerStreamsCollector()
	n.wg.Add(4)
	go func() { defer n.wg.Done(); n.eng.Run() }()
	go func() { defer n.wg.Done(); n.deliveryLoop() }()
	go func() { defer n.wg.Done(); n.interestLoop() }()
	go func() { defer n.wg.Done(); n.memberLoop() }()
	n.engineUp.Store(true)
	if err = n.openSocket(); err != nil {
		return err
	}
	n.signalInterest()
	// In the background, and again whenever the node is alone: a seed that
	// is down, or slow to answer, holds up neither New nor Close for long.
	if err := n.mem.StartJoining(n.cfg.Join); err != nil {
		return fmt.Errorf("node: membership: %w", err)
	}
	return nil
}

func (n *Node) openTransport() error {
	tc := n.cfg.Transport
	tc.Listen = netip.MustParseAddrPort(n.cfg.DataAddr)
	tc.Interface = n.cfg.Interface
	tc.MaxDatagram = n.cfg.MaxDatagram
	if tc.Logger == nil {
		tc.Logger = n.log
	}
	if err := n.newGuard(); err != nil {
		return err
	}
	h := n.guardHandler(n.onPackets)
	if n.cfg.NewConn == nil {
		ep, err := transport.Open(tc, h)
		if err != nil {
			return fmt.Errorf("node: transport: %w", err)
		}
		n.ep, n.conn = ep, n.guardConn(ep)
		return nil
	}
	c, err := n.cfg.NewConn(tc, h)
	if err != nil {
		return fmt.Errorf("node: transport: %w", err)
	}
	n.conn = n.guardConn(c)
	n.ep, _ = c.(*transport.Endpoint)
	return nil
}

// answered tells the transport that the Handler call under way replied
// from the reading goroutine, so its reader polls for the answer before it
// sleeps (transport.Endpoint.Answered).
func (n *Node) answered() {
	if n.ep != nil {
		n.ep.Answered()
	}
}

func (n *Node) openMembership() error {
	mc := n.cfg.Membership
	host, port, _ := splitHostPort(n.cfg.GossipAddr)
	if host == "" {
		host = "0.0.0.0"
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("%w: gossip port %q", ErrConfig, port)
	}
	if p == 0 {
		p = membership.AnyPort
	}
	mc.NodeName, mc.BindAddr, mc.BindPort = n.cfg.Name, host, p
	if n.cfg.AdvertiseAddr != "" {
		ah, ap, _ := splitHostPort(n.cfg.AdvertiseAddr)
		mc.AdvertiseAddr = ah
		mc.AdvertisePort, _ = strconv.Atoi(ap)
	} else if host == "0.0.0.0" && p != membership.AnyPort {
		// Bound to every IPv4 address: advertise one of them. Left alone,
		// memberlist may pick an IPv6 address the IPv4 socket cannot serve.
		if ip, ok := hostIPv4(); ok {
			mc.AdvertiseAddr, mc.AdvertisePort = ip.String(), p
		}
	}
	mc.Local = mc.Local || n.cfg.LocalProfile
	mc.Group = n.cfg.Group
	n.sealMembership(&mc)
	if mc.Logger == nil {
		mc.Logger = n.log
	}
	local := membership.LocalState{Instance: n.instance, DataAddr: n.dataAddr()}
	if n.mem, err = membership.New(mc, local); err != nil {
		return fmt.Errorf("node: membership: %w", err)
	}
	n.interest = n.mem.Interest
	if n.guard != nil {
		n.guard.SetSenders(n.mem.Sender)
	}
	return nil
}

// hostIPv4 picks the address to advertise for a daemon bound to 0.0.0.0:
// the first private (RFC 1918) IPv4 address of an interface that is up,
// else its first global unicast IPv4 address.
func hostIPv4() (netip.Addr, bool) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return netip.Addr{}, false
	}
	var global netip.Addr
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			pfx, err := netip.ParsePrefix(a.String())
			if err != nil || !pfx.Addr().Is4() || !pfx.Addr().IsGlobalUnicast() {
				continue
			}
			if pfx.Addr().IsPrivate() {
				return pfx.Addr(), true
			}
			if !global.IsValid() {
				global = pfx.Addr()
			}
		}
	}
	return global, global.IsValid()
}

// dataAddr is the unicast data address to advertise: the bound address, or
// with data bound to all addresses the advertise or gossip host; when that
// is unspecified too, membership substitutes the address memberlist
// advertises.
func (n *Node) dataAddr() netip.AddrPort {
	a := n.conn.LocalAddr()
	if !a.Addr().IsUnspecified() {
		return a
	}
	host, _, _ := splitHostPort(n.cfg.GossipAddr)
	if n.cfg.AdvertiseAddr != "" {
		host, _, _ = splitHostPort(n.cfg.AdvertiseAddr)
	}
	if ip, err := netip.ParseAddr(host); err == nil && !ip.IsUnspecified() {
		return netip.AddrPortFrom(ip, a.Port())
	}
	return a
}

func (n *Node) openSocket() error {
	if n.cfg.SocketAddr == "off" && n.cfg.SocketPath == "" {
		return nil
	}
	sc := n.cfg.Socket
	sc.Addr = n.cfg.SocketAddr
	sc.FrameRoom = wholeRoom // frames bound for the network are wrapped in place
	if sc.Logger == nil {
		sc.Logger = n.log
	}
	srv, err := rsbsocket.NewServer(sc, socketHandler{n})
	if err != nil {
		return err
	}
	if n.cfg.SocketAddr != "off" {
		if n.sockLn, err = net.Listen("tcp4", sc.Addr); err != nil {
			return fmt.Errorf("node: socket server: %w", err)
		}
	}
	if n.cfg.SocketPath != "" {
		if n.unixLn, err = listenUnix(n.cfg.SocketPath, n.cfg.SocketMode); err != nil {
			if n.sockLn != nil {
				_ = n.sockLn.Close()
				n.sockLn = nil
			}
			return fmt.Errorf("node: socket server: %w", err)
		}
	}
	n.sock = srv
	n.registerSocketCollector()
	for _, ln := range []net.Listener{n.sockLn, n.unixLn} {
		if ln == nil {
			continue
		}
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, rsbsocket.ErrServerClosed) {
				n.log.Error("socket server stopped", "err", err, "listener", ln.Addr().String())
			}
		}()
	}
	return nil
}

// Instance returns this node's instance id.
func (n *Node) Instance() datagram.InstanceID { return n.instance }

// Name returns the node's memberlist name.
func (n *Node) Name() string { return n.mem.Name() }

// Registry returns the node's Prometheus registry.
func (n *Node) Registry() *prometheus.Registry { return n.reg }

// SocketPath returns the Unix socket the RSB socket server serves, or "".
func (n *Node) SocketPath() string {
	if n.unixLn == nil {
		return ""
	}
	return n.cfg.SocketPath
}

// SocketAddr returns the RSB socket server's TCP address (nil when disabled).
func (n *Node) SocketAddr() net.Addr {
	if n.sockLn == nil {
		return nil
	}
	return n.sockLn.Addr()
}

// GossipAddr returns the memberlist address peers join.
func (n *Node) GossipAddr() netip.AddrPort { return n.mem.GossipAddr() }

// DataAddr returns the unicast UDP data address advertised to peers.
func (n *Node) DataAddr() netip.AddrPort { return n.mem.DataAddr() }

// Join adds the node to the cluster of the given gossip addresses.
func (n *Node) Join(seeds ...string) (int, error) { return n.mem.Join(seeds) }

// Members returns the remote cluster members currently alive.
func (n *Node) Members() []membership.Member { return n.mem.Members() }

// Ready reports nil once the node serves (used by /readyz).
func (n *Node) Ready() error {
	select {
	case <-n.stop:
		return ErrClosed
	default:
		return nil
	}
}

// Close stops the node: the socket server stops accepting and closes its
// connections in order, reliable streams get ShutdownFlush to answer
// outstanding NACKs, the node leaves the cluster and every goroutine ends.
// It is idempotent.
func (n *Node) Close() error {
	n.closeOnce.Do(func() { n.closeErr = n.close() })
	return n.closeErr
}

func (n *Node) close() error {
	var errs []error
	if n.sock != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		errs = append(errs, n.sock.Shutdown(ctx))
		cancel()
	}
	if n.engineUp.Load() { // else New failed before the engine ran: nothing to flush
		n.flushReliable(n.cfg.ShutdownFlush)
	}
	if n.mem != nil {
		errs = append(errs, n.mem.Leave(time.Second), n.mem.Close())
	}
	close(n.stop)
	if n.eng != nil {
		n.eng.Stop()
	}
	if n.conn != nil {
		errs = append(errs, n.conn.Close())
	}
	n.wg.Wait()
	return errors.Join(errs...)
}

// SocketInterest returns the union of the socket clients' interests (what
// they announced through introspection; All when one announced no listener).
func (n *Node) SocketInterest() rsbsocket.Interest {
	if n.sock == nil {
		return rsbsocket.Interest{}
	}
	return n.sock.Interest()
}

// SocketBacklog returns the frames and body bytes queued for the socket
// clients and not yet written, over all connections.
func (n *Node) SocketBacklog() (frames, bytes int) {
	if n.sock == nil {
		return 0, 0
	}
	return n.sock.QueueDepth()
}

// Wants reports whether some peer wants events on sc: whether a publish on
// sc goes to the network.
func (n *Node) Wants(sc scope.Scope) bool {
	in := n.interest()
	for _, id := range group.IDs(sc) {
		if in.Wanted(id) {
			return true
		}
	}
	return false
}
