package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/net/ipv4"

	"github.com/rsbd/rsbd/internal/spinpay"
)

// Endpoint is a daemon's UDP network: one unicast socket that every datagram
// is sent from and peers' unicast datagrams arrive on, plus receive sockets
// for the joined multicast groups, at most GroupsPerSocket groups each
// (Linux refuses the 21st join on one socket). Each socket has one reader
// goroutine that hands batches to the Handler; Close ends them all.
// Endpoint implements Conn.
type Endpoint struct {
	cfg   Config
	log   *slog.Logger
	h     Handler
	ifi   *net.Interface
	uni   *sock
	local netip.AddrPort
	// own are the source addresses this Endpoint's multicast datagrams may
	// carry when the kernel loops them back (with the port of local).
	own []netip.Addr

	closed atomic.Bool
	// answers counts the deliveries a handler answered (Answered).
	answers atomic.Uint64
	// spinGate decides whether the readers' polls for answers pay.
	spinGate spinpay.Gate
	wg       sync.WaitGroup
	stats    counters
	send     sync.Pool // *sendScratch

	mu      sync.Mutex
	ports   map[uint16][]*sock       // receive sockets per group port
	groups  map[netip.AddrPort]*sock // joined group -> its socket
	retired uint64                   // kernel drops of closed sockets
}

// sock is one UDP socket.
type sock struct {
	conn      *net.UDPConn
	pc        *ipv4.PacketConn
	multicast bool
	port      uint16
	groups    int  // joined groups; guarded by Endpoint.mu
	full      bool // the kernel refused a join; guarded by Endpoint.mu
	// drops is the socket's SO_RXQ_OVFL count: datagrams the kernel
	// dropped because the receive buffer was full.
	drops atomic.Uint32
}

// Open creates an Endpoint: it binds the unicast socket, configures
// multicast sending on cfg.Interface and starts its reader. Datagrams go to
// h. Open logs the socket buffer sizes the kernel granted.
func Open(cfg Config, h Handler) (*Endpoint, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("%w: nil Handler", ErrConfig)
	}
	cfg = cfg.withDefaults()
	ifi, err := multicastInterface(cfg.Interface)
	if err != nil {
		return nil, err
	}
	e := &Endpoint{cfg: cfg, log: cfg.Logger, h: h, ifi: ifi,
		ports: map[uint16][]*sock{}, groups: map[netip.AddrPort]*sock{}}
	e.uni, err = e.openSocket(cfg.Listen, false)
	if err != nil {
		return nil, err
	}
	if err := e.setupSending(); err != nil {
		_ = e.uni.conn.Close()
		return nil, err
	}
	register(e)
	e.start(e.uni)
	return e, nil
}

// setupSending configures multicast on the unicast socket and records the
// addresses the Endpoint sends from.
func (e *Endpoint) setupSending() error {
	pc := e.uni.pc
	if err := errors.Join(pc.SetMulticastInterface(e.ifi), pc.SetMulticastTTL(e.cfg.TTL),
		pc.SetMulticastLoopback(true)); err != nil {
		return fmt.Errorf("transport: multicast options on %s: %w", e.ifi.Name, err)
	}
	ap := e.uni.conn.LocalAddr().(*net.UDPAddr).AddrPort()
	e.local = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	if e.local.Addr().IsUnspecified() {
		e.own = hostAddrs()
	} else {
		e.own = []netip.Addr{e.local.Addr()}
	}
	raw, err := e.uni.conn.SyscallConn()
	if err != nil {
		return err
	}
	rcv, snd, err := bufferSizes(raw)
	e.stats.rcvbuf.Store(int64(rcv))
	e.stats.sndbuf.Store(int64(snd))
	level := slog.LevelInfo
	if err != nil || (rcv > 0 && rcv < e.cfg.SocketBuffer) {
		level = slog.LevelWarn // raise net.core.rmem_max / wmem_max
	}
	e.log.Log(context.Background(), level, "rsbd transport open", "local", e.local,
		"interface", e.ifi.Name, "max_datagram", e.cfg.MaxDatagram, "ttl", e.cfg.TTL, "requested_buffer", e.cfg.SocketBuffer,
		"rcvbuf", rcv, "sndbuf", snd, "err", err)
	return nil
}

// multicastInterface resolves the interface name; "" is the loopback one.
func multicastInterface(name string) (*net.Interface, error) {
	if name != "" {
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			return nil, fmt.Errorf("%w: interface %q: %w", ErrConfig, name, err)
		}
		return ifi, nil
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("transport: list interfaces: %w", err)
	}
	for i := range ifs {
		if ifs[i].Flags&net.FlagLoopback != 0 && ifs[i].Flags&net.FlagUp != 0 {
			return &ifs[i], nil
		}
	}
	return nil, fmt.Errorf("%w: no loopback interface is up; set Interface", ErrConfig)
}

// hostAddrs returns the host's IPv4 addresses. A multicast datagram sent
// from a socket bound to all addresses carries one of them as its source,
// not necessarily one of the sending interface (over loopback the kernel
// picks a global address of another interface).
func hostAddrs() []netip.Addr {
	addrs, _ := net.InterfaceAddrs()
	var out []netip.Addr
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap().Is4() {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out
}

// openSocket binds a UDP socket; shared receive sockets allow other sockets
// on the same port.
func (e *Endpoint) openSocket(addr netip.AddrPort, shared bool) (*sock, error) {
	lc := net.ListenConfig{Control: controlFunc(shared)}
	pc, err := lc.ListenPacket(context.Background(), "udp4", addr.String())
	if err != nil {
		return nil, fmt.Errorf("transport: bind %v: %w", addr, err)
	}
	c := pc.(*net.UDPConn)
	err = errors.Join(c.SetReadBuffer(e.cfg.SocketBuffer), c.SetWriteBuffer(e.cfg.SocketBuffer))
	if err == nil {
		var raw syscall.RawConn
		if raw, err = c.SyscallConn(); err == nil {
			err = forceBuffers(raw, e.cfg.SocketBuffer)
		}
	}
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("transport: socket buffers on %v: %w", addr, err)
	}
	return &sock{conn: c, pc: ipv4.NewPacketConn(c), multicast: shared, port: addr.Port()}, nil
}

// LocalAddr returns the unicast address the Endpoint is bound to.
func (e *Endpoint) LocalAddr() netip.AddrPort { return e.local }

// Interface returns the interface multicast is joined and sent on.
func (e *Endpoint) Interface() *net.Interface { return e.ifi }

// Close closes every socket and waits for the readers to return. It is
// idempotent and must not be called from the Handler.
func (e *Endpoint) Close() error {
	e.mu.Lock()
	if e.closed.Swap(true) {
		e.mu.Unlock()
		e.wg.Wait()
		return nil
	}
	unregister(e)
	err := e.uni.conn.Close()
	for _, socks := range e.ports {
		for _, s := range socks {
			err = errors.Join(err, s.conn.Close())
		}
	}
	e.mu.Unlock()
	e.wg.Wait()
	return err
}

// Join joins the group on a receive socket for its port that has room,
// opening a new one when all are full.
func (e *Endpoint) Join(group netip.AddrPort) error {
	g, err := CheckGroup(group)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed.Load():
		return ErrClosed
	case e.groups[g] != nil:
		return nil
	case len(e.groups) >= e.cfg.MaxGroups:
		return fmt.Errorf("%w: %d joined", ErrTooManyGroups, len(e.groups))
	}
	for _, s := range e.ports[g.Port()] {
		if s.full || s.groups >= e.cfg.GroupsPerSocket {
			continue
		}
		err := e.joinOn(s, g)
		if err == nil || !isGroupLimit(err) {
			return err
		}
		s.full = true
	}
	s, err := e.openSocket(netip.AddrPortFrom(netip.IPv4Unspecified(), g.Port()), true)
	if err != nil {
		return err
	}
	if err := e.joinOn(s, g); err != nil {
		_ = s.conn.Close()
		return err
	}
	e.ports[g.Port()] = append(e.ports[g.Port()], s)
	e.start(s)
	return nil
}

func (e *Endpoint) joinOn(s *sock, g netip.AddrPort) error {
	if err := s.pc.JoinGroup(e.ifi, &net.UDPAddr{IP: g.Addr().AsSlice()}); err != nil {
		return fmt.Errorf("transport: join %v on %s: %w", g, e.ifi.Name, err)
	}
	s.groups++
	e.groups[g] = s
	return nil
}

// Leave leaves the group and closes its receive socket if no group is left
// on it.
func (e *Endpoint) Leave(group netip.AddrPort) error {
	g, err := CheckGroup(group)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed.Load() {
		return ErrClosed
	}
	s := e.groups[g]
	if s == nil {
		return nil
	}
	delete(e.groups, g)
	s.groups--
	s.full = false
	if s.groups == 0 {
		e.ports[g.Port()] = slices.DeleteFunc(e.ports[g.Port()], func(x *sock) bool { return x == s })
		if len(e.ports[g.Port()]) == 0 {
			delete(e.ports, g.Port())
		}
		e.retired += uint64(s.drops.Load())
		return s.conn.Close() // its reader sees the close and returns
	}
	if err := s.pc.LeaveGroup(e.ifi, &net.UDPAddr{IP: g.Addr().AsSlice()}); err != nil {
		return fmt.Errorf("transport: leave %v on %s: %w", g, e.ifi.Name, err)
	}
	return nil
}

// start runs the socket's reader goroutine; Close waits for it.
func (e *Endpoint) start(s *sock) {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		newReader(e, s).run()
	}()
}
