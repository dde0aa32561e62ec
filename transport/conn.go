package transport

import (
	"errors"
	"net/netip"
)

// Errors returned by the transport and by the in-memory networks that
// implement Conn. Branch on them with errors.Is.
var (
	// ErrClosed means the Conn was closed.
	ErrClosed = errors.New("transport: closed")
	// ErrAddress means an address is not usable: not IPv4, port 0, or not a
	// multicast address where a group is expected.
	ErrAddress = errors.New("transport: invalid address")
	// ErrTooLarge means a datagram exceeds the configured maximum size.
	ErrTooLarge = errors.New("transport: datagram too large")
	// ErrTooManyGroups means joining would exceed the configured group limit.
	ErrTooManyGroups = errors.New("transport: too many groups")
	// ErrConfig means a Config field is out of range.
	ErrConfig = errors.New("transport: invalid config")
)

// Conn is the datagram network of one daemon: rsbd's own PacketConn. The
// real UDP Endpoint and the fault-injecting in-memory network of the tests
// implement it, so the node runs unchanged on either.
//
// Received datagrams are not read from a Conn: every implementation hands
// them to the Handler it was created with. All methods are safe for
// concurrent use.
type Conn interface {
	// Send writes every datagram of bufs to every destination of dst, in
	// order per destination. A destination is a multicast group address
	// (delivered to every daemon that joined it) or a peer's unicast
	// address (LocalAddr of that peer). Delivery is best effort: Send
	// returns an error only for invalid arguments, a closed Conn, or
	// datagrams the local network stack refused, and it attempts every
	// destination before returning.
	Send(dst []netip.AddrPort, bufs ...[]byte) error

	// Join starts receiving datagrams sent to the multicast group (its
	// address and port). Joining a group already joined does nothing.
	Join(group netip.AddrPort) error

	// Leave stops receiving the group. Leaving a group not joined does
	// nothing.
	Leave(group netip.AddrPort) error

	// LocalAddr returns the unicast address this Conn receives on and
	// sends from. Its IP is unspecified when bound to all addresses.
	LocalAddr() netip.AddrPort

	// Close stops all receiving, waits until no Handler call is running
	// and releases the sockets. It is idempotent. It must not be called
	// from the Handler.
	Close() error
}

// GatherConn is a Conn that also sends datagrams given as lists of
// segments, which the network stack gathers without the caller copying
// them together (the Endpoint does; test networks need not).
type GatherConn interface {
	Conn
	// SendGather is Send for datagrams that are each the concatenation
	// of their segments, at most MaxSegments of them.
	SendGather(dst []netip.AddrPort, dgrams ...[][]byte) error
}

// Packet is one received datagram.
type Packet struct {
	// Data is the datagram. It is only valid until the Handler returns;
	// copy what must outlive the call.
	Data []byte
	// From is the sender's unicast address: where to send a reply.
	From netip.AddrPort
}

// Handler receives datagrams in batches of one or more. An Endpoint calls it
// from one goroutine per socket, so calls may run concurrently; a Handler
// should decode, copy what it keeps into a bounded queue, and return quickly.
// It must not retain the batch or the Data slices.
type Handler func(batch []Packet)

// CheckDest returns a Send destination as an unmapped IPv4 address, or an
// error wrapping ErrAddress. Implementations of Conn use it in Send.
func CheckDest(a netip.AddrPort) (netip.AddrPort, error) {
	ip := a.Addr().Unmap()
	if !ip.Is4() || a.Port() == 0 || ip.IsUnspecified() {
		return a, &addrError{a, "not an IPv4 address and port"}
	}
	return netip.AddrPortFrom(ip, a.Port()), nil
}

// CheckGroup returns the group as an unmapped IPv4 multicast address, or an
// error wrapping ErrAddress. Implementations of Conn use it in Join and
// Leave.
func CheckGroup(g netip.AddrPort) (netip.AddrPort, error) {
	ip := g.Addr().Unmap()
	if !ip.Is4() || !ip.IsMulticast() || g.Port() == 0 {
		return g, &addrError{g, "not an IPv4 multicast group address and port"}
	}
	return netip.AddrPortFrom(ip, g.Port()), nil
}

type addrError struct {
	addr netip.AddrPort
	why  string
}

func (e *addrError) Error() string { return "transport: " + e.addr.String() + ": " + e.why }
func (e *addrError) Unwrap() error { return ErrAddress }
