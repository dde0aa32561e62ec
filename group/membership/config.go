package membership

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rsbd/rsbd/group"
)

// ErrConfig is wrapped by every error Config.Validate returns.
var ErrConfig = errors.New("membership: invalid config")

// Config configures a Membership. The zero value is valid: zero fields take
// their defaults. It is not modified by New.
type Config struct {
	// NodeName must be unique in the cluster. Default: the hostname followed
	// by a random suffix, so several daemons on one host work.
	NodeName string
	// BindAddr is the gossip bind address (UDP and TCP). Default DefaultBindAddr.
	BindAddr string
	// BindPort is the gossip port. Zero means DefaultBindPort; AnyPort lets
	// the kernel choose (read it back with Membership.GossipAddr).
	BindPort int
	// AdvertiseAddr is the IP other members reach this node at. Default: the
	// bind address, or a private address of the host when bound to all
	// interfaces (set it on hosts with only public addresses).
	AdvertiseAddr string
	// AdvertisePort is the port other members reach this node at. Default the
	// bound port.
	AdvertisePort int
	// Join lists seed members ("host" or "host:port"). New starts the join
	// loop on them (StartJoining): it contacts them in the background and
	// again whenever this node has no peer, so New never waits for them.
	Join []string
	// JoinRetry is the join loop's first delay after a failed attempt, and
	// how often it checks whether the node is alone. Default
	// DefaultJoinRetry (LocalJoinRetry in the Local profile).
	JoinRetry time.Duration
	// JoinRetryMax caps the join loop's doubling delay. Default
	// DefaultJoinRetryMax (LocalJoinRetryMax in the Local profile).
	JoinRetryMax time.Duration
	// Local selects the loopback test profile (fast probes and gossip, see
	// params.go) instead of the LAN one.
	Local bool
	// SecretKey (16, 24 or 32 bytes) turns on AES-GCM encryption of gossip.
	SecretKey []byte
	// Keys (16, 24 or 32 bytes each), if any, are the gossip keyring
	// instead of SecretKey: the first encrypts, all decrypt, and
	// Membership.SetKeys replaces them while running. Unencrypted gossip
	// is then refused in both directions.
	Keys [][]byte
	// Label, if set, is prefixed to every gossip packet and stream; nodes with
	// different labels ignore each other. At most 255 bytes.
	Label string

	// ProbeInterval, GossipInterval and PushPullInterval override the
	// profile's memberlist timers when non-zero.
	ProbeInterval    time.Duration
	GossipInterval   time.Duration
	PushPullInterval time.Duration
	// DeadNodeReclaimTime overrides the profile's delay after which a failed
	// node's name may be reused from another address, when non-zero.
	DeadNodeReclaimTime time.Duration

	// Group holds the interest table limits (MaxPeers, MaxGroupsPerPeer).
	Group group.Config
	// Logger receives this package's logs; memberlist's own log lines go to
	// it at debug level. Default slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the LAN configuration the zero value stands for,
// with a generated node name.
func DefaultConfig() Config {
	return Config{}.withDefaults()
}

// LocalConfig returns the loopback test profile: Local timers, bound to
// 127.0.0.1 on a port the kernel picks.
func LocalConfig() Config {
	return Config{Local: true, BindAddr: "127.0.0.1", BindPort: AnyPort}.withDefaults()
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.NodeName == "" {
		c.NodeName = defaultNodeName()
	}
	if c.BindAddr == "" {
		c.BindAddr = DefaultBindAddr
	}
	if c.BindPort == 0 {
		c.BindPort = DefaultBindPort
	}
	if c.DeadNodeReclaimTime == 0 {
		c.DeadNodeReclaimTime = DefaultDeadNodeReclaimTime
		if c.Local {
			c.DeadNodeReclaimTime = LocalDeadNodeReclaimTime
		}
	}
	if c.JoinRetry == 0 {
		c.JoinRetry = pick(c.Local, LocalJoinRetry, DefaultJoinRetry)
	}
	if c.JoinRetryMax == 0 {
		c.JoinRetryMax = max(c.JoinRetry, pick(c.Local, LocalJoinRetryMax, DefaultJoinRetryMax))
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// pick returns local in the Local profile, else lan.
func pick(local bool, localValue, lan time.Duration) time.Duration {
	if local {
		return localValue
	}
	return lan
}

// defaultNodeName returns the hostname with a random hex suffix.
func defaultNodeName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "rsbd"
	}
	if len(host) > MaxNodeNameLen-1-2*nodeNameSuffixBytes {
		host = host[:MaxNodeNameLen-1-2*nodeNameSuffixBytes]
	}
	var b [nodeNameSuffixBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return host + "-" + hex.EncodeToString(b[:])
}

// Validate reports whether c (with defaults applied) is usable. Errors wrap
// ErrConfig.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case len(c.NodeName) > MaxNodeNameLen:
		return fmt.Errorf("%w: NodeName longer than %d bytes", ErrConfig, MaxNodeNameLen)
	case c.BindPort != AnyPort && (c.BindPort < 1 || c.BindPort > 65535):
		return fmt.Errorf("%w: BindPort %d", ErrConfig, c.BindPort)
	case c.AdvertisePort < 0 || c.AdvertisePort > 65535:
		return fmt.Errorf("%w: AdvertisePort %d", ErrConfig, c.AdvertisePort)
	case len(c.SecretKey) != 0 && len(c.SecretKey) != 16 && len(c.SecretKey) != 24 && len(c.SecretKey) != 32:
		return fmt.Errorf("%w: SecretKey must be 16, 24 or 32 bytes, not %d", ErrConfig, len(c.SecretKey))
	case len(c.Keys) != 0 && len(c.SecretKey) != 0:
		return fmt.Errorf("%w: both SecretKey and Keys", ErrConfig)
	case len(c.Label) > maxLabelLen:
		return fmt.Errorf("%w: Label longer than %d bytes", ErrConfig, maxLabelLen)
	case c.ProbeInterval < 0 || c.GossipInterval < 0 || c.PushPullInterval < 0 || c.DeadNodeReclaimTime < 0 ||
		c.JoinRetry < 0:
		return fmt.Errorf("%w: negative interval", ErrConfig)
	case c.JoinRetryMax < c.JoinRetry:
		return fmt.Errorf("%w: JoinRetryMax %v below JoinRetry %v", ErrConfig, c.JoinRetryMax, c.JoinRetry)
	}
	if _, err := netip.ParseAddr(c.BindAddr); err != nil {
		return fmt.Errorf("%w: BindAddr: %v", ErrConfig, err)
	}
	if c.AdvertiseAddr != "" {
		if _, err := netip.ParseAddr(c.AdvertiseAddr); err != nil {
			return fmt.Errorf("%w: AdvertiseAddr: %v", ErrConfig, err)
		}
	}
	if err := c.Group.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// memberlistConfig translates c (defaults applied) into a memberlist
// configuration; the delegates are set by New.
func (c Config) memberlistConfig() *memberlist.Config {
	mc := memberlist.DefaultLANConfig()
	mc.PushPullInterval = DefaultPushPullInterval
	if c.Local {
		mc = memberlist.DefaultLocalConfig()
		mc.ProbeInterval = LocalProbeInterval
		mc.ProbeTimeout = LocalProbeTimeout
		mc.GossipInterval = LocalGossipInterval
		mc.PushPullInterval = LocalPushPullInterval
		mc.GossipToTheDeadTime = LocalGossipToTheDeadTime
	}
	mc.Name = c.NodeName
	mc.BindAddr = c.BindAddr
	mc.BindPort = max(c.BindPort, 0)
	mc.AdvertiseAddr = c.AdvertiseAddr
	mc.AdvertisePort = c.AdvertisePort
	if mc.AdvertisePort == 0 {
		mc.AdvertisePort = mc.BindPort // 0 with AnyPort: memberlist fills in the bound port
	}
	mc.SecretKey = c.SecretKey
	mc.Label = c.Label
	if c.ProbeInterval > 0 {
		mc.ProbeInterval = c.ProbeInterval
	}
	if c.GossipInterval > 0 {
		mc.GossipInterval = c.GossipInterval
	}
	if c.PushPullInterval > 0 {
		mc.PushPullInterval = c.PushPullInterval
	}
	mc.DeadNodeReclaimTime = c.DeadNodeReclaimTime
	mc.EnableCompression = compressMessages
	mc.DelegateProtocolVersion = delegateProtocolVersion
	mc.DelegateProtocolMin = delegateProtocolVersion
	mc.DelegateProtocolMax = delegateProtocolVersion
	mc.Logger = newMemberlistLogger(c.Logger)
	return mc
}
