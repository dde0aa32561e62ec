package datagram

// Limits of the daemon-to-daemon datagram format (docs/WIRE.md §2). They are
// part of the wire contract: a daemon rejects any datagram outside them.
const (
	// Version is the only wire version this package reads and writes.
	Version = 1

	// HeaderSize is the size of the fixed header that starts every datagram.
	HeaderSize = 48

	// RecordOverhead is the per-record cost inside a DATA body: the u32 length.
	RecordOverhead = 4

	// countSize is the size of the u16 record or range count.
	countSize = 2

	// rangeSize is the encoded size of one Range: first u64, last u64.
	rangeSize = 16

	// targetSize is the size of the NACK target instance id.
	targetSize = 16

	// heartbeatBodySize is the HEARTBEAT body: trail u64, highest u64.
	heartbeatBodySize = 16

	// ackBodySize is the ACK body: target instance, edge u64.
	ackBodySize = targetSize + 8

	// MaxDatagramSize is the hard upper bound of a datagram: the largest UDP
	// payload over IPv4 (65535 - 20 byte IP header - 8 byte UDP header).
	MaxDatagramSize = 65507

	// DefaultDatagramSize is the datagram size a daemon is configured with on
	// a LAN: below a 1500 byte Ethernet MTU with room for IP/UDP headers and
	// the AEAD overhead, so datagrams are never IP-fragmented. Loopback tests
	// may configure up to MaxDatagramSize.
	DefaultDatagramSize = 1400

	// MaxRecords bounds the records of one DATA datagram. Small events are
	// packed many to a datagram; 1024 leaves room for 60 byte records in a
	// 64 KiB loopback datagram while bounding the Records slice a hostile
	// datagram can make a receiver allocate (1024 slice headers, 24 KiB).
	MaxRecords = 1024

	// MaxNackRanges bounds the ranges of a NACK or GONE. A full NACK body
	// (16 + 2 + 64*16 = 1042 bytes) fits the default datagram size.
	MaxNackRanges = 64
)

// Limits of the replay filter and of key files.
const (
	// ReplayWindow is how many counters below a sender's highest one the
	// filter remembers, one bit each. A datagram further behind is refused
	// as a replay: sealed datagrams are sealed (and counted) when they are
	// sent, repairs included, so only reordering in the network and the
	// sender's own send batches put an authentic datagram behind others,
	// never by thousands.
	ReplayWindow = 4096
	// DefaultReplaySenders bounds the senders a Replay tracks when
	// NewReplay is given no bound: above the cluster's peer limit, so the
	// members of a cluster are never evicted.
	DefaultReplaySenders = 4096
	// MaxKeyFileSize bounds the key file ParseKeys reads: 255 keys of a
	// long line each, with room for comments.
	MaxKeyFileSize = 64 << 10
)
