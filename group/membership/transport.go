package membership

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/memberlist"
)

// errAborted is the error of a dial after Close began.
var errAborted = errors.New("membership: closing")

// stoppableTransport is memberlist's NetTransport whose outgoing stream
// connections Close can end: their dials take a context, and the
// connections open are tracked. memberlist's join and pushes dial with its
// TCP timeout (10 s on a LAN) and keep that timeout for the exchange, so a
// seed that drops connection attempts, or accepts and never answers, would
// otherwise hold Close (and a daemon's SIGTERM) for that long.
type stoppableTransport struct {
	*memberlist.NetTransport
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	conns   map[*trackedConn]struct{}
	aborted bool
}

// newStoppableTransport binds the gossip port as memberlist would: with a
// kernel-chosen port (BindPort 0) it tries a few times, since the port the
// kernel gives for TCP may be taken for UDP.
func newStoppableTransport(mc *memberlist.Config) (*stoppableTransport, error) {
	nc := &memberlist.NetTransportConfig{BindAddrs: []string{mc.BindAddr}, BindPort: mc.BindPort, Logger: mc.Logger}
	tries := 1
	if mc.BindPort == 0 {
		tries = anyPortBindTries
	}
	var nt *memberlist.NetTransport
	var err error
	for range tries {
		if nt, err = memberlist.NewNetTransport(nc); err == nil || !addrInUse(err) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("membership: bind gossip %s:%d: %w", mc.BindAddr, mc.BindPort, err)
	}
	if mc.BindPort == 0 {
		mc.BindPort = nt.GetAutoBindPort()
		mc.AdvertisePort = mc.BindPort
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &stoppableTransport{NetTransport: nt, ctx: ctx, cancel: cancel, conns: map[*trackedConn]struct{}{}}, nil
}

// addrInUse reports whether err is a bind that failed on a port already
// taken. memberlist formats the socket error into its own with %v, so when
// the chain does not hold syscall.EADDRINUSE its text is looked for.
func addrInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), syscall.EADDRINUSE.Error())
}

// DialTimeout dials addr; see DialAddressTimeout.
func (t *stoppableTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

// DialAddressTimeout dials a's TCP address within timeout, or until abort.
func (t *stoppableTransport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(t.ctx, "tcp", a.Addr)
	if err != nil {
		return nil, err
	}
	c := &trackedConn{Conn: nc, t: t}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.aborted {
		_ = nc.Close()
		return nil, errAborted
	}
	t.conns[c] = struct{}{}
	return c, nil
}

// abort ends the dials under way and closes the outgoing stream
// connections; later dials fail. Close calls it before it waits for
// anything.
func (t *stoppableTransport) abort() {
	t.cancel()
	t.mu.Lock()
	conns := t.conns
	t.conns, t.aborted = nil, true
	t.mu.Unlock()
	for c := range conns {
		_ = c.Conn.Close()
	}
}

// trackedConn is an outgoing stream connection, known to its transport
// until closed.
type trackedConn struct {
	net.Conn
	t *stoppableTransport
}

// Close forgets the connection and closes it.
func (c *trackedConn) Close() error {
	c.t.mu.Lock()
	delete(c.t.conns, c)
	c.t.mu.Unlock()
	return c.Conn.Close()
}
