package bus

import (
	"errors"
	"net"
	"sync"
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
	defer close(e.done)
	buf := make([]byte, maxUDP)
	for {
		n, from, err := e.c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		_, _ = e.c.WriteToUDPAddrPort(buf[:n], from)
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

// UDPClient is an Endpoint over one connected UDP socket: Publish sends a
// datagram to the echo, Subscribe receives what comes back (the topic is
// ignored: there is one flow).
type UDPClient struct {
	c    *net.UDPConn
	mu   sync.Mutex
	fn   Handler
	done chan struct{}
}

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
	u := &UDPClient{c: c, done: make(chan struct{})}
	go u.loop()
	return u, nil
}

func (u *UDPClient) loop() {
	defer close(u.done)
	buf := make([]byte, maxUDP)
	for {
		n, err := u.c.Read(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		u.mu.Lock()
		fn := u.fn
		u.mu.Unlock()
		if fn != nil {
			fn(buf[:n])
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

// Subscribe sets the handler of the datagrams coming back.
func (u *UDPClient) Subscribe(_ string, fn Handler) (func(), error) {
	u.mu.Lock()
	u.fn = fn
	u.mu.Unlock()
	return func() {
		u.mu.Lock()
		u.fn = nil
		u.mu.Unlock()
	}, nil
}

// Close closes the socket.
func (u *UDPClient) Close() error {
	err := u.c.Close()
	<-u.done
	return err
}
