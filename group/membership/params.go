package membership

import "time"

// Addresses and names.
const (
	// DefaultBindAddr is the gossip bind address: all IPv4 interfaces.
	DefaultBindAddr = "0.0.0.0"
	// DefaultBindPort is the gossip port (UDP and TCP), memberlist's usual one.
	DefaultBindPort = 7946
	// AnyPort as BindPort lets the kernel pick a free gossip port; the bound
	// port is then read back (Membership.GossipAddr). Tests use it.
	AnyPort = -1
	// MaxNodeNameLen bounds node names: they travel with a one-byte length.
	MaxNodeNameLen = 255
	// nodeNameSuffixBytes random bytes (hex) follow the hostname in a default
	// node name, so several daemons on one host get distinct names.
	nodeNameSuffixBytes = 4
	// anyPortBindTries is how often the gossip transport tries a
	// kernel-chosen port whose UDP twin turns out to be taken.
	anyPortBindTries = 10
	// maxLabelLen is memberlist's limit on the gossip label.
	maxLabelLen = 255
)

// Interest gossip limits.
const (
	// MaxBroadcastBytes bounds an interest message sent by gossip broadcast.
	// Memberlist packs broadcasts into UDP packets of 1400 bytes together with
	// its own messages, label and encryption overhead; 1024 bytes always fit
	// (about 55 groups). Larger states are pushed to every member over TCP.
	MaxBroadcastBytes = 1024

	// MaxAckSends bounds the confirmations of pushed states being sent at
	// once; a push beyond it is applied but not confirmed (its sender times
	// out and relies on gossip).
	MaxAckSends = 64
	// pushLoopDelay is how long after a change of a large local state the
	// push loop sends it: long enough for the PushLocal that follows a
	// change made at once to claim its members (which then get a delta, not
	// the whole state twice), short against gossip's own pace.
	pushLoopDelay = 20 * time.Millisecond
	// MaxPushPullBytes bounds the interest table sent in one push/pull
	// exchange (memberlist refuses more than 20 MiB of state). Peers that do
	// not fit are left out and counted; they converge through broadcasts.
	MaxPushPullBytes = 16 << 20
	// MaxPendingStates bounds the states held for peers whose membership has
	// not arrived yet (applied when it does).
	MaxPendingStates = 64
	// MaxPendingGroups bounds the groups of a state held pending, so pending
	// states stay within 64 × 16 KiB.
	MaxPendingGroups = 1024
	// EventQueueDepth is the buffer of the Events channel. Events that find it
	// full are dropped and counted (memberlist must never block on us).
	EventQueueDepth = 256
)

// LAN profile (the default), on top of memberlist's DefaultLANConfig: probe
// every second, gossip every 200 ms.
const (
	// DefaultPushPullInterval is the period of full state exchanges with one
	// random member (memberlist's LAN default is 30 s). It bounds how long a
	// node that missed an interest broadcast stays out of date.
	DefaultPushPullInterval = 15 * time.Second
	// DefaultJoinRetry is the join loop's first delay after a failed
	// attempt and its check period while the node has peers.
	DefaultJoinRetry = time.Second
	// DefaultJoinRetryMax caps the join loop's delay: a seed that comes up
	// is found within about this long (plus a quarter of jitter).
	DefaultJoinRetryMax = 30 * time.Second
	// DefaultDeadNodeReclaimTime lets a node that failed come back under the
	// same name from another address (a restarted daemon with a fixed name
	// and a new port or IP) after this long.
	DefaultDeadNodeReclaimTime = 10 * time.Second
)

// Local profile for loopback clusters in tests: memberlist's
// DefaultLocalConfig with faster timers, so joins converge in tens of
// milliseconds and failures are detected within a few seconds.
const (
	LocalProbeInterval       = 250 * time.Millisecond
	LocalProbeTimeout        = 150 * time.Millisecond
	LocalGossipInterval      = 50 * time.Millisecond
	LocalPushPullInterval    = 2 * time.Second
	LocalGossipToTheDeadTime = 2 * time.Second
	LocalDeadNodeReclaimTime = 100 * time.Millisecond
	LocalJoinRetry           = 100 * time.Millisecond
	LocalJoinRetryMax        = 2 * time.Second
)

// compressMessages is memberlist's message compression, off: interest
// messages are lists of group ids, which are hashes that LZW cannot shrink,
// and compressing a large state cost more CPU on both sides than sending
// it. memberlist decompresses what a peer compressed either way.
const compressMessages = false

// delegateProtocolVersion is the version of the interest messages and node
// metadata of this package, announced to memberlist.
const delegateProtocolVersion = 1
