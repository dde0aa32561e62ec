// Package transport owns rsbd's UDP sockets: the Conn interface the node
// sends and receives daemon-to-daemon datagrams through, and Endpoint, its
// implementation on real IPv4 sockets.
//
// An Endpoint has one unicast socket, which every datagram leaves from and
// peers' unicast datagrams (NACKs, unicast-mode data) arrive on, and
// receive sockets for multicast groups. Linux allows 20 group memberships
// per socket (net.ipv4.igmp_max_memberships), so joins are spread over as
// many sockets as needed; each binds the group port with SO_REUSEADDR and
// SO_REUSEPORT, so several daemons on one host share it, and sets
// IP_MULTICAST_ALL=0, so it only receives the groups joined on it. Multicast
// loopback is on, so daemons on one host hear each other; an Endpoint drops
// its own looped-back datagrams unless Config.ReceiveOwn is set.
//
// Reads and writes are batched (recvmmsg and sendmmsg through
// golang.org/x/net/ipv4). Every socket has one reader goroutine that hands
// batches of datagrams with their source address to the Handler given to
// Open; Close closes the sockets, which is the readers' only exit, and
// waits for them. Socket buffers of DefaultSocketBuffer are requested and
// the granted sizes logged and reported in Stats, with every drop counted
// by reason, including the kernel's receive buffer overflows.
//
// A Guard seals the data plane around any Conn and Handler: what the
// wrapped Conn sends is sealed (datagram.Sealer, with this run's epoch and
// a counter), and the wrapped Handler sees only datagrams that are sealed
// with a key of the ring, authentic, from an instance a cluster member
// runs, and not replayed (datagram.Replay); the others are dropped and
// counted by reason in GuardStats. Its keyring can be replaced while
// running.
//
// The fault-injecting in-memory network in internal/faultnet implements
// the same Conn for tests.
package transport
