package bus

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"time"
)

// maxUDP is the largest datagram the raw UDP reference handles.
const maxUDP = 65507

// UDPEcho sends every datagram it receives back to where it came from: the
// other end of the raw UDP ping-pong reference (Go net.UDPConn, blocking
// reads, one datagram per system call).
type UDPEcho struct {
	c    *net.UDPConn
	done chan struct{}
}

// StartUDPEcho listens on 127.0.0.1 (ephemeral port).
func StartUDPEcho() (*UDPEcho, error) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	e := &UDPEcho{c: c, done: make(chan struct{})}
	go e.loop()
	return e, nil
}

func (e *UDPEcho) loop() {
	echoLoop(e.c, e.done, func(from netip.AddrPort) netip.AddrPort { return from })
}

// echoLoop writes every datagram c reads back to to(sender) until c is
// closed, then closes done.
func echoLoop(c *net.UDPConn, done chan struct{}, to func(netip.AddrPort) netip.AddrPort) {
	defer close(done)
	buf := make([]byte, maxUDP)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		_, _ = c.WriteToUDPAddrPort(buf[:n], to(from))
	}
}

// Addr returns the echo's address.
func (e *UDPEcho) Addr() string { return e.c.LocalAddr().String() }

// Close stops the echo.
func (e *UDPEcho) Close() error {
	err := e.c.Close()
	<-e.done
	return err
}

// UDPClient is the pinging end of the raw UDP reference: one connected
// socket on which the calling goroutine writes a datagram and blocks
// reading the echo (RoundTrip), the leanest round trip Go's net package
// offers. It publishes but cannot subscribe.
type UDPClient struct {
	c   *net.UDPConn
	buf []byte
}

// ErrNoSubscribe is returned by Subscribe of the raw reference clients
// (UDPClient, McastClient, TCPClient).
var ErrNoSubscribe = errors.New("bus: the raw reference clients only do round trips")

// DialUDP connects to the echo at addr.
func DialUDP(addr string) (*UDPClient, error) {
	ra, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return nil, err
	}
	c, err := net.DialUDP("udp4", nil, ra)
	if err != nil {
		return nil, err
	}
	return &UDPClient{c: c, buf: make([]byte, maxUDP)}, nil
}

// RoundTrip sends payload and reads datagrams until one satisfies match
// (true) or timeout passes (false, nil). One goroutine at a time.
func (u *UDPClient) RoundTrip(payload []byte, timeout time.Duration, match func([]byte) bool) (bool, error) {
	if err := u.c.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return false, err
	}
	if _, err := u.c.Write(payload); err != nil {
		return false, err
	}
	return readMatch(u.c, u.buf, match)
}

// readMatch reads datagrams from c into buf until one satisfies match
// (true) or c's read deadline passes (false, nil).
func readMatch(c *net.UDPConn, buf []byte, match func([]byte) bool) (bool, error) {
	for {
		n, err := c.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return false, nil
			}
			return false, err
		}
		if match(buf[:n]) {
			return true, nil
		}
	}
}

// Publish sends payload as one datagram.
func (u *UDPClient) Publish(_ string, payload []byte) error {
	_, err := u.c.Write(payload)
	return err
}

// Flush does nothing: every Publish is a system call.
func (u *UDPClient) Flush() error { return nil }

// Sync does nothing: every Publish is a system call.
func (u *UDPClient) Sync() error { return nil }

// Subscribe is not supported: replies are read by RoundTrip.
func (u *UDPClient) Subscribe(string, Handler) (func(), error) { return nil, ErrNoSubscribe }

// Close closes the socket.
func (u *UDPClient) Close() error { return u.c.Close() }
