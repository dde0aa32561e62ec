package group

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrConfig is wrapped by every error Config.Validate returns.
var ErrConfig = errors.New("group: invalid config")

// Config holds the multicast address pool and the interest table limits.
// The zero value is valid: every zero field takes its default.
type Config struct {
	// PoolBase is the first multicast address of the pool (IPv4 or IPv6).
	// Default DefaultPoolBase (239.255.77.0).
	PoolBase netip.Addr
	// PoolSize is how many consecutive addresses from PoolBase groups are
	// spread over, 1..MaxPoolSize. Default DefaultPoolSize (16).
	PoolSize int
	// PoolPort is the UDP port of every pool address. Default DefaultPoolPort.
	PoolPort uint16

	// MaxPeers bounds the remote peers in an Interest table. Default DefaultMaxPeers.
	MaxPeers int
	// MaxGroupsPerPeer bounds the groups of one peer and of the local set,
	// 1..MaxEncodedGroups. Default DefaultMaxGroupsPerPeer.
	MaxGroupsPerPeer int
}

// DefaultConfig returns the configuration the zero value stands for, with
// every default filled in.
func DefaultConfig() Config {
	return Config{}.withDefaults()
}

// withDefaults returns c with every zero field replaced by its default.
func (c Config) withDefaults() Config {
	if !c.PoolBase.IsValid() {
		c.PoolBase = DefaultPoolBase
	}
	c.PoolBase = c.PoolBase.Unmap()
	if c.PoolSize == 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.PoolPort == 0 {
		c.PoolPort = DefaultPoolPort
	}
	if c.MaxPeers == 0 {
		c.MaxPeers = DefaultMaxPeers
	}
	if c.MaxGroupsPerPeer == 0 {
		c.MaxGroupsPerPeer = DefaultMaxGroupsPerPeer
	}
	return c
}

// Validate reports whether c (with defaults applied) is usable. Errors wrap
// ErrConfig.
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.PoolSize < 1 || c.PoolSize > MaxPoolSize {
		return fmt.Errorf("%w: PoolSize %d not in 1..%d", ErrConfig, c.PoolSize, MaxPoolSize)
	}
	if c.PoolBase.Zone() != "" {
		return fmt.Errorf("%w: PoolBase %s has a zone", ErrConfig, c.PoolBase)
	}
	if !c.PoolBase.IsMulticast() {
		return fmt.Errorf("%w: PoolBase %s is not a multicast address", ErrConfig, c.PoolBase)
	}
	last, ok := addrAdd(c.PoolBase, uint32(c.PoolSize-1))
	if !ok || !last.IsMulticast() {
		return fmt.Errorf("%w: pool %s + %d leaves the multicast range", ErrConfig, c.PoolBase, c.PoolSize)
	}
	if c.MaxPeers < 1 {
		return fmt.Errorf("%w: MaxPeers %d < 1", ErrConfig, c.MaxPeers)
	}
	if c.MaxGroupsPerPeer < 1 || c.MaxGroupsPerPeer > MaxEncodedGroups {
		return fmt.Errorf("%w: MaxGroupsPerPeer %d not in 1..%d", ErrConfig, c.MaxGroupsPerPeer, MaxEncodedGroups)
	}
	return nil
}
