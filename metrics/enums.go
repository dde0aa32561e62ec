package metrics

import "strconv"

// The enums below are the only label values rsbd metrics use. Append only: label values
// are an interface to dashboards and alerts.

// Path is where an event entered or left the daemon.
type Path uint8

// Paths.
const (
	PathSocket  Path = iota // RSB socket protocol clients
	PathNetwork             // other daemons, over datagrams
	PathLocal               // participants embedded in the daemon's process
	NumPaths                // number of paths, not a path
)

var pathNames = [NumPaths]string{"socket", "network", "local"}

// String returns the label value.
func (p Path) String() string { return name(pathNames[:], int(p), "path") }

// Kind is the kind of a daemon-to-daemon datagram (docs/WIRE.md).
type Kind uint8

// Kinds.
const (
	KindData      Kind = iota // DATA
	KindHeartbeat             // HEARTBEAT
	KindNack                  // NACK
	KindGone                  // GONE
	KindAck                   // ACK (receiver progress for flow control)
	NumKinds                  // number of kinds, not a kind
)

var kindNames = [NumKinds]string{"data", "heartbeat", "nack", "gone", "ack"}

// String returns the label value.
func (k Kind) String() string { return name(kindNames[:], int(k), "kind") }

// LossReason says why a receiver gave up on missing datagrams and reported a loss.
type LossReason uint8

// Loss reasons.
const (
	LossGone       LossReason = iota // the sender said GONE: no longer retained
	LossTrail                        // a heartbeat's trail passed the gap
	LossRetries                      // NACK retries exhausted
	LossGapLimit                     // more gaps than the receiver tracks
	LossReassembly                   // an event evicted from its reassembly buffer
	NumLossReasons
)

var lossNames = [NumLossReasons]string{"gone", "trail", "retries", "gap_limit", "reassembly"}

// String returns the label value.
func (r LossReason) String() string { return name(lossNames[:], int(r), "loss reason") }

// DropReason says why something (an event, fragment, datagram or frame) was dropped.
// Other packages map their own reasons into this list.
type DropReason uint8

// Drop reasons.
const (
	DropFragmentInvalid   DropReason = iota // fragment inconsistent with its event (count, index, size)
	DropFragmentDuplicate                   // fragment already held
	DropReassemblyTimeout                   // partial event expired
	DropReassemblyEvicted                   // partial event evicted by the reassembly memory bound
	DropReassemblyLimit                     // too many partial events in one stream
	DropEventTooLarge                       // event above the maximum event size
	DropDuplicate                           // datagram or event already delivered
	DropLate                                // unreliable ordered: older than one already delivered
	DropLoss                                // partial event in a range reported lost
	DropReorderOverflow                     // reorder buffer of a stream full
	DropStreamLimit                         // too many tracked streams
	DropUnknownStream                       // control message for a stream not known here
	DropNotInterested                       // datagram for a group no local subscriber wants
	DropScopeMismatch                       // event in a wanted group but no matching local sink
	DropDecodeError                         // datagram, frame or notification does not decode
	DropAuthFailed                          // sealed datagram that fails authentication (forged, corrupted, another label)
	DropUnknownKey                          // datagram sealed with an unknown key id
	DropReplay                              // datagram seen before
	DropUnknownSender                       // sender instance not in the cluster
	DropQueueFull                           // bounded queue between goroutines full
	DropMemoryLimit                         // daemon-wide memory bound reached
	DropSlowClient                          // socket client's send queue full
	DropFrameTooLarge                       // socket frame above the maximum size
	DropBadHandshake                        // socket peer failed the handshake
	DropSendError                           // the socket refused the datagram or frame
	DropClosed                              // dropped while shutting down
	DropSocketBuffer                        // the kernel's socket receive buffer overflowed
	DropDatagramTooLarge                    // datagram read above the configured datagram size
	DropFragmentAfterDrop                   // fragment of an event already dropped (evicted, expired, invalid)
	DropUnsealed                            // datagram in clear where every datagram must be sealed
	NumDropReasons
)

var dropNames = [NumDropReasons]string{
	"fragment_invalid", "fragment_duplicate", "reassembly_timeout", "reassembly_evicted",
	"reassembly_limit", "event_too_large", "duplicate", "late", "loss", "reorder_overflow",
	"stream_limit", "unknown_stream", "not_interested", "scope_mismatch", "decode_error",
	"auth", "unknown_key", "replay", "unknown_sender", "queue_full", "memory_limit",
	"slow_client", "frame_too_large", "bad_handshake", "send_error", "closed",
	"socket_buffer", "datagram_too_large", "fragment_after_drop", "unsealed",
}

// String returns the label value.
func (r DropReason) String() string { return name(dropNames[:], int(r), "drop reason") }

// ParseDropReason returns the reason whose label value is s.
func ParseDropReason(s string) (DropReason, bool) {
	for i, n := range dropNames {
		if n == s {
			return DropReason(i), true
		}
	}
	return 0, false
}

// Queue names a bounded queue whose depth is exported.
type Queue uint8

// Queues.
const (
	QueueSocketIn   Queue = iota // publishes (socket clients' and embedded) waiting for the engine: queued, taken or waiting for room
	QueueSocketOut               // frames waiting for socket clients, all connections
	QueueNetworkIn               // datagrams read, not yet processed
	QueueNetworkOut              // datagrams waiting to be sent
	QueueDelivery                // events waiting for local delivery
	NumQueues
)

var queueNames = [NumQueues]string{"socket_in", "socket_out", "network_in", "network_out", "delivery"}

// String returns the label value.
func (q Queue) String() string { return name(queueNames[:], int(q), "queue") }

// Buffer names a bounded memory pool whose size in bytes is exported.
type Buffer uint8

// Buffers.
const (
	BufferRetransmit Buffer = iota // sealed datagrams kept for repair
	BufferReassembly               // fragments of partial events
	BufferReorder                  // datagrams held for ordered delivery
	NumBuffers
)

var bufferNames = [NumBuffers]string{"retransmit", "reassembly", "reorder"}

// String returns the label value.
func (b Buffer) String() string { return name(bufferNames[:], int(b), "buffer") }

// name returns names[i] or a placeholder for out-of-range values.
func name(names []string, i int, what string) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return what + "(" + strconv.Itoa(i) + ")"
}
