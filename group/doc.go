// Package group owns the mapping from RSB scopes to rsbd groups and the
// bookkeeping of who wants which group. It is pure: no goroutines, no sockets
// and no memberlist; code that only needs group names or ids imports this
// package alone.
//
// # Names and ids
//
// The group of a scope is identified by the MD5 digest of its normalized
// string (with trailing slash). ID returns the 16-byte digest, which rsbd
// datagrams carry in their header; Name returns the RSB group name: the
// lowercase hex digest cut to 31 characters, as the RSB Spread transport
// names its groups. An event on scope /a/b/ is sent to the groups of every
// super-scope including itself (/, /a/, /a/b/); IDs and the allocation-free
// AppendIDs enumerate them root first and keep a small bounded cache so the
// publish path does not hash on every event.
//
// Digests collide rarely and a group carries the events of all its
// sub-scopes, so receivers always filter delivered events by scope again.
//
// # Multicast addresses
//
// A Pool maps every group id onto one of a small, configurable number of
// multicast addresses (by default PoolSize addresses from 239.255.77.0, an
// administratively scoped range). Several groups share an address; that is
// harmless because receivers filter by the group id in the datagram header,
// and it keeps the number of multicast joins per host bounded.
//
// # Interest
//
// Interest is the table of remote peers (keyed by their memberlist node name)
// and the groups each of them wants, with their instance id and unicast data
// address. A peer's state carries a version that grows with each change so
// stale gossip is ignored, and instances that left are remembered for a while
// so their old state cannot come back. Wanted tells the publish path whether
// any peer wants a group; Peers lists them for unicast fan-out. LocalSet is the
// reference-counted set of groups this node wants; its snapshot is encoded
// with AppendPeerState and decoded with DecodePeerState, a length-checked
// decoder for network input.
//
// Interest and LocalSet are safe for concurrent use.
package group
