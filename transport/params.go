package transport

import (
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// Limits and defaults of the UDP transport. Config fields left zero take the
// Default values.
const (
	// DefaultTTL is the multicast TTL: 1 keeps datagrams on the local link.
	DefaultTTL = 1

	// DefaultMaxDatagram is the largest datagram sent or accepted: the LAN
	// datagram size, never IP-fragmented on Ethernet. Every daemon of a
	// cluster must use the same value; loopback tests may raise it up to
	// datagram.MaxDatagramSize.
	DefaultMaxDatagram = datagram.DefaultDatagramSize

	// DefaultSocketBuffer is the SO_RCVBUF and SO_SNDBUF size requested.
	// The Linux default (208 KiB) loses most of a 1000 datagram burst to a
	// receiver that is briefly busy. The kernel caps the request at
	// net.core.rmem_max / wmem_max (often 4 MiB) unless the process may
	// force it (CAP_NET_ADMIN), and reports twice the granted size. The
	// node sizes its flow window from what was granted: 8 MiB (16 MiB
	// reported) lets a stream keep its whole 6 MiB window in flight, 4 MiB
	// about 3.8 MiB. Every socket may hold that much kernel memory when its
	// reader falls behind (one unicast socket and one per 20 joined groups).
	DefaultSocketBuffer = 8 << 20

	// DefaultBatch is the number of datagrams per recvmmsg or sendmmsg
	// call. Batches of 32 get most of the syscall saving of larger ones
	// while a receive socket's buffers stay small (32 x MaxDatagram).
	DefaultBatch = 32

	// MaxSegments bounds the segments of one datagram given to SendGather:
	// Linux refuses a message of more than 1024 iovecs (UIO_MAXIOV).
	MaxSegments = 1024

	// MaxBatch bounds ReadBatch and WriteBatch.
	MaxBatch = 1024

	// DefaultGroupsPerSocket is the number of multicast groups joined on one
	// receive socket before another is opened: Linux's default
	// net.ipv4.igmp_max_memberships. If the host's limit is lower, the
	// ENOBUFS of a join marks the socket full and another one is opened.
	DefaultGroupsPerSocket = 20

	// DefaultMaxGroups bounds the groups an Endpoint joins (52 receive
	// sockets at 20 groups each).
	DefaultMaxGroups = 1024

	// DefaultSpinWait is how long a reader polls its socket after a
	// delivery that was answered before it parks. A request/reply round
	// trip between two processes on loopback is several times shorter when
	// neither side parks than when both wake from idle, and 50 µs covers
	// the answer to an answer on a small virtual machine; a reply that is
	// not answered costs at most this much CPU (docs/TUNING.md).
	DefaultSpinWait = 50 * time.Microsecond

	// MaxSpinWait bounds Config.SpinWait.
	MaxSpinWait = 10 * time.Millisecond

	// oobSize is the ancillary buffer per received datagram: room for the
	// SO_RXQ_OVFL drop counter message.
	oobSize = 64

	// errorLogEvery rate-limits logging of repeated read or send errors:
	// the first and then every errorLogEvery-th is logged, all are counted.
	errorLogEvery = 1000
)
