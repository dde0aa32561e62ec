package datagram

// Kind says what a datagram carries. Wire values are fixed forever:
// ONLY APPEND TO THIS LIST, never renumber or reuse a value.
type Kind uint8

const (
	// KindData carries one or more records (serialized FragmentedNotifications)
	// of one stream under one sequence number.
	KindData Kind = 1
	// KindHeartbeat announces the sender's retained range [Trail, Highest].
	KindHeartbeat Kind = 2
	// KindNack asks the target stream's sender to repeat the listed ranges.
	KindNack Kind = 3
	// KindGone tells receivers that the listed ranges will never be repaired.
	KindGone Kind = 4
	// KindAck reports a receiver's progress on a reliable stream to its
	// sender: every sequence number below Edge is resolved (delivered or
	// reported lost). Senders use it for flow control.
	KindAck Kind = 5
)

// Class is the QoS class of a stream: the RSB reliability x ordering matrix.
// Wire values are fixed: ONLY APPEND.
type Class uint8

const (
	// UnreliableUnordered delivers on arrival, no repair (RSB UNRELIABLE_MESS).
	UnreliableUnordered Class = 0
	// UnreliableOrdered never waits and drops late data (RSB FIFO_MESS, unreliable).
	UnreliableOrdered Class = 1
	// ReliableUnordered repairs losses and delivers on arrival exactly once (RSB RELIABLE_MESS).
	ReliableUnordered Class = 2
	// ReliableOrdered repairs losses and delivers in sequence order (RSB FIFO_MESS).
	ReliableOrdered Class = 3
)

// Reliable reports whether the class repairs losses.
func (c Class) Reliable() bool { return c == ReliableUnordered || c == ReliableOrdered }

// Ordered reports whether the class delivers in sequence order.
func (c Class) Ordered() bool { return c == UnreliableOrdered || c == ReliableOrdered }

// Valid reports whether c is a known class.
func (c Class) Valid() bool { return c <= ReliableOrdered }

// InstanceID identifies one run of one daemon (random at start).
type InstanceID [16]byte

// GroupID is the 16-byte MD5 digest of a normalized scope; its hex form cut
// to 31 characters is the RSB group name.
type GroupID [16]byte

// StreamKey names a sequence space: one sender instance, one group, one class.
type StreamKey struct {
	Instance InstanceID
	Group    GroupID
	Class    Class
}

// Range is an inclusive range of sequence numbers, First <= Last.
type Range struct {
	First, Last uint64
}

// Len returns the number of sequence numbers in r.
func (r Range) Len() uint64 { return r.Last - r.First + 1 }

// Datagram is one decoded daemon-to-daemon datagram.
//
// The header fields Kind, Flags, Stream and Seq are present on every kind.
// Stream.Instance is always the instance that sent the datagram; for NACK the
// stream being repaired is (Target, Stream.Group, Stream.Class).
type Datagram struct {
	Kind   Kind
	Flags  Flags
	KeyID  uint8
	Stream StreamKey
	// Seq is the datagram's sequence number in its stream (DATA only; 0 otherwise).
	Seq uint64

	// Records are the serialized FragmentedNotifications of a DATA datagram.
	// After decoding they alias the input buffer.
	Records [][]byte
	// Pieces, on a DATA datagram to send, gives its records in pieces that
	// are not copied together: record i is the concatenation of Pieces[i]
	// (a fragment's header, its data where it lies, its trailer). A datagram
	// to send has Records or Pieces, not both; Decode fills Records only.
	Pieces [][][]byte

	// Trail and Highest (HEARTBEAT): the oldest retained and the highest sent
	// sequence number. Trail > Highest means nothing is retained yet.
	Trail, Highest uint64

	// Target is the sender instance whose stream a NACK asks to repair or
	// an ACK reports on.
	Target InstanceID
	// Edge (ACK) is the receiver's lowest unresolved sequence number.
	Edge uint64
	// Ranges are the missing ranges of a NACK or the lost ranges of a GONE.
	Ranges []Range
}

// Flags are per-datagram bits.
type Flags uint8

const (
	// FlagSealed marks a body that is AEAD-sealed with key KeyID.
	FlagSealed Flags = 1 << 0
	// FlagRepair marks a DATA datagram that is a retransmission.
	FlagRepair Flags = 1 << 1
)
