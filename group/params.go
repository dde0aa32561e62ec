package group

import "net/netip"

// NameLen is the length of an RSB group name: the 32 hex digits of the MD5
// digest with the last one removed (the RSB Spread rule, which leaves room
// for the terminating NUL in Spread's 32-byte group names).
const NameLen = 31

// Multicast address pool defaults.
const (
	// DefaultPoolSize is the number of multicast addresses groups are spread
	// over. Each address is one multicast join per host, so it stays small.
	DefaultPoolSize = 16
	// MaxPoolSize bounds PoolSize: more addresses would mean more joins than
	// hosts and switches handle comfortably.
	MaxPoolSize = 1024
	// DefaultPoolPort is the UDP port of every pool address (one above the
	// RSB socket transport's 55555).
	DefaultPoolPort = 55556
)

// DefaultPoolBase is the first address of the default pool, inside the IPv4
// administratively scoped block 239.255.0.0/16 (RFC 2365 organization-local
// scope), so events do not leave the site by default.
var DefaultPoolBase = netip.AddrFrom4([4]byte{239, 255, 77, 0})

// Interest table limits.
const (
	// DefaultMaxPeers bounds the number of remote peers in an Interest table.
	DefaultMaxPeers = 1024
	// MaxEncodedGroups is the hard limit on the groups of one peer state: the
	// decoder rejects more, and MaxGroupsPerPeer may not exceed it. At 16 bytes
	// per group an encoded state stays at about 1 MiB.
	MaxEncodedGroups = 1 << 16
	// maxLocalHistory bounds the changes a LocalSet remembers for deltas
	// (16 384 changes of 32 bytes, 512 KiB): a member that confirmed an
	// older version gets the whole state instead.
	maxLocalHistory = 16 << 10
	// DefaultMaxGroupsPerPeer bounds the groups one peer (or this node) may want.
	DefaultMaxGroupsPerPeer = MaxEncodedGroups
	// MaxTombstones is how many departed instance ids an Interest table
	// remembers so that stale gossip about them is refused; the oldest is
	// forgotten first.
	MaxTombstones = 4096
)

// idCacheSize bounds the scope → group ids cache of AppendIDs. When it is
// full the cache is emptied and refilled by use, which keeps it cheap and
// bounded whatever the scopes seen. 65536 scopes (about 10 MB) keep a daemon
// carrying tens of thousands of scopes from hashing every event's scope.
const idCacheSize = 65536
