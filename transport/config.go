package transport

import (
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// Config configures an Endpoint. The zero value works: zero fields take the
// defaults of params.go, and the Endpoint binds an ephemeral unicast port on
// all addresses and uses the loopback interface for multicast.
type Config struct {
	// Listen is the unicast address: peers send NACKs and unicast data to
	// it, and every datagram (multicast included) leaves from it. Zero
	// means all IPv4 addresses and an ephemeral port.
	Listen netip.AddrPort

	// Interface names the network interface multicast groups are joined
	// and sent on. Empty means the loopback interface, which only reaches
	// daemons on the same host: a daemon serving a LAN names its NIC.
	Interface string

	// TTL is the multicast TTL, 1..255; 0 means DefaultTTL.
	TTL int

	// MaxDatagram is the largest datagram sent or accepted, in bytes, up to
	// datagram.MaxDatagramSize; 0 means DefaultMaxDatagram. Larger
	// received datagrams are dropped and counted as Oversize.
	MaxDatagram int

	// ReadBatch is the number of datagrams read per system call (recvmmsg);
	// 1 reads one at a time; 0 means DefaultBatch. Each socket holds
	// ReadBatch x (MaxDatagram+1) bytes of receive buffers.
	ReadBatch int

	// SpinWait is how long a reader polls its socket for the next datagram
	// before it sleeps, after a delivery the Handler answered (see
	// Endpoint.Answered): the answer to a reply comes back within
	// microseconds, and polling saves the wake-up. A reader does not
	// poll after a batch from another Endpoint of this process, which
	// answers on the threads the poll would hold. 0 means
	// DefaultSpinWait; negative never polls.
	SpinWait time.Duration

	// WriteBatch is the number of datagrams written per system call
	// (sendmmsg); 1 writes one at a time; 0 means DefaultBatch.
	WriteBatch int

	// SocketBuffer is the SO_RCVBUF and SO_SNDBUF size requested for every
	// socket; 0 means DefaultSocketBuffer. Stats reports what was granted.
	SocketBuffer int

	// GroupsPerSocket is the number of groups joined on one receive socket
	// before another is opened; 0 means DefaultGroupsPerSocket.
	GroupsPerSocket int

	// MaxGroups bounds the joined groups; 0 means DefaultMaxGroups.
	MaxGroups int

	// ReceiveOwn delivers this Endpoint's own multicast datagrams, which
	// the kernel loops back so daemons on one host hear each other. By
	// default they are dropped (counted as Own).
	ReceiveOwn bool

	// Logger receives socket setup and error logs; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns a Config with every default filled in.
func DefaultConfig() Config {
	return Config{}.withDefaults()
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if !c.Listen.IsValid() {
		c.Listen = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	}
	c.Listen = netip.AddrPortFrom(c.Listen.Addr().Unmap(), c.Listen.Port())
	c.TTL = orDefault(c.TTL, DefaultTTL)
	c.MaxDatagram = orDefault(c.MaxDatagram, DefaultMaxDatagram)
	c.ReadBatch = orDefault(c.ReadBatch, DefaultBatch)
	c.WriteBatch = orDefault(c.WriteBatch, DefaultBatch)
	c.SocketBuffer = orDefault(c.SocketBuffer, DefaultSocketBuffer)
	c.GroupsPerSocket = orDefault(c.GroupsPerSocket, DefaultGroupsPerSocket)
	c.MaxGroups = orDefault(c.MaxGroups, DefaultMaxGroups)
	if c.SpinWait == 0 {
		c.SpinWait = DefaultSpinWait
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Validate reports the first field out of range, wrapping ErrConfig. Zero
// fields are valid (they take defaults).
func (c Config) Validate() error {
	if c.Listen.IsValid() && !c.Listen.Addr().Unmap().Is4() {
		return fmt.Errorf("%w: Listen %v is not IPv4", ErrConfig, c.Listen)
	}
	checks := []struct {
		name     string
		v, lo, h int
	}{
		{"TTL", c.TTL, 0, 255},
		{"MaxDatagram", c.MaxDatagram, 0, datagram.MaxDatagramSize},
		{"ReadBatch", c.ReadBatch, 0, MaxBatch},
		{"WriteBatch", c.WriteBatch, 0, MaxBatch},
		{"SocketBuffer", c.SocketBuffer, 0, 1 << 30},
		{"GroupsPerSocket", c.GroupsPerSocket, 0, 1 << 16},
		{"MaxGroups", c.MaxGroups, 0, 1 << 20},
	}
	for _, k := range checks {
		if k.v < k.lo || k.v > k.h {
			return fmt.Errorf("%w: %s %d outside [%d, %d]", ErrConfig, k.name, k.v, k.lo, k.h)
		}
	}
	if c.SpinWait > MaxSpinWait {
		return fmt.Errorf("%w: SpinWait %v above %v", ErrConfig, c.SpinWait, MaxSpinWait)
	}
	if c.MaxDatagram != 0 && c.MaxDatagram < datagram.HeaderSize {
		return fmt.Errorf("%w: MaxDatagram %d below the %d byte header", ErrConfig, c.MaxDatagram, datagram.HeaderSize)
	}
	return nil
}
