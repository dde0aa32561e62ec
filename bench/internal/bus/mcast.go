package bus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/ipv4"
)

// The raw multicast reference: the raw UDP ping-pong over loopback
// multicast, as rsbd's embedded peers talk. The echo listens on group A,
// the pinger on group B, each on a socket of its own (ephemeral port,
// IP_MULTICAST_ALL off on Linux) joined to its group only; pings go to
// group A, pongs to group B at the pinger's port, with IP_MULTICAST_LOOP.

// mcastTTL keeps the datagrams on the host's loopback interface.
const mcastTTL = 1

// ErrNotMulticast is returned for a group that is not an IPv4 multicast
// address.
var ErrNotMulticast = errors.New("bus: not an IPv4 multicast group")

// McastEcho sends every datagram that reaches its group back to the reply
// group, at the port the datagram came from.
type McastEcho struct {
	c     *net.UDPConn
	addr  netip.AddrPort
	reply netip.Addr
	done  chan struct{}
}

// StartMcastEcho joins group on the loopback interface and echoes to
// replyGroup.
func StartMcastEcho(group, replyGroup string) (*McastEcho, error) {
	g, err := parseGroup(group)
	if err != nil {
		return nil, err
	}
	rg, err := parseGroup(replyGroup)
	if err != nil {
		return nil, err
	}
	c, err := joinLoopback(g)
	if err != nil {
		return nil, err
	}
	port := c.LocalAddr().(*net.UDPAddr).AddrPort().Port()
	e := &McastEcho{c: c, addr: netip.AddrPortFrom(g, port), reply: rg, done: make(chan struct{})}
	go e.loop()
	return e, nil
}

func (e *McastEcho) loop() {
	echoLoop(e.c, e.done, func(from netip.AddrPort) netip.AddrPort {
		return netip.AddrPortFrom(e.reply, from.Port())
	})
}

// Addr returns the group and port the echo listens on.
func (e *McastEcho) Addr() string { return e.addr.String() }

// Close stops the echo.
func (e *McastEcho) Close() error {
	err := e.c.Close()
	<-e.done
	return err
}

// McastClient is the pinging end of the multicast reference: it sends each
// ping to the echo's group and reads the pongs on its own group on the
// calling goroutine (RoundTrip), as UDPClient does.
type McastClient struct {
	c   *net.UDPConn
	to  netip.AddrPort
	buf []byte
}

// DialMcast joins group (where the pongs come) and sends to the echo at
// addr (its group and port).
func DialMcast(addr, group string) (*McastClient, error) {
	to, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, err
	}
	if _, err := parseGroup(to.Addr().String()); err != nil {
		return nil, err
	}
	g, err := parseGroup(group)
	if err != nil {
		return nil, err
	}
	c, err := joinLoopback(g)
	if err != nil {
		return nil, err
	}
	return &McastClient{c: c, to: to, buf: make([]byte, maxUDP)}, nil
}

// RoundTrip sends payload and reads datagrams until one satisfies match
// (true) or timeout passes (false, nil). One goroutine at a time.
func (m *McastClient) RoundTrip(payload []byte, timeout time.Duration, match func([]byte) bool) (bool, error) {
	if err := m.c.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return false, err
	}
	if err := m.Publish("", payload); err != nil {
		return false, err
	}
	return readMatch(m.c, m.buf, match)
}

// Publish sends payload as one datagram to the echo's group.
func (m *McastClient) Publish(_ string, payload []byte) error {
	_, err := m.c.WriteToUDPAddrPort(payload, m.to)
	return err
}

// Flush does nothing: every Publish is a system call.
func (m *McastClient) Flush() error { return nil }

// Sync does nothing: every Publish is a system call.
func (m *McastClient) Sync() error { return nil }

// Subscribe is not supported: replies are read by RoundTrip.
func (m *McastClient) Subscribe(string, Handler) (func(), error) { return nil, ErrNoSubscribe }

// Close closes the socket.
func (m *McastClient) Close() error { return m.c.Close() }

func parseGroup(s string) (netip.Addr, error) {
	g, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, err
	}
	if !g.Is4() || !g.IsMulticast() {
		return netip.Addr{}, fmt.Errorf("%w: %s", ErrNotMulticast, s)
	}
	return g, nil
}

// joinLoopback opens a UDP socket on an ephemeral port, joins group on the
// loopback interface and sends multicast there, looped back to the host.
func joinLoopback(group netip.Addr) (*net.UDPConn, error) {
	ifi, err := loopbackInterface()
	if err != nil {
		return nil, err
	}
	lc := net.ListenConfig{Control: mcastControl}
	pc, err := lc.ListenPacket(context.Background(), "udp4", "0.0.0.0:0")
	if err != nil {
		return nil, err
	}
	c := pc.(*net.UDPConn)
	p := ipv4.NewPacketConn(c)
	if err := errors.Join(p.JoinGroup(ifi, &net.UDPAddr{IP: group.AsSlice()}),
		p.SetMulticastInterface(ifi), p.SetMulticastTTL(mcastTTL), p.SetMulticastLoopback(true)); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("bus: multicast on %s: %w", ifi.Name, err)
	}
	return c, nil
}

// loopbackInterface returns the first loopback interface that is up.
func loopbackInterface() (*net.Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	for i := range ifs {
		if ifs[i].Flags&net.FlagLoopback != 0 && ifs[i].Flags&net.FlagUp != 0 {
			return &ifs[i], nil
		}
	}
	return nil, errors.New("bus: no loopback interface is up")
}
