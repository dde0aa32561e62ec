package fragmentation

import "time"

// Limits of the fragmentation package. Every buffer the Assembler fills from
// the network is bounded by one of these (or by the Config field that
// overrides it); every drop is counted by Reason.
const (
	// DefaultMaxFragmentSize is the largest serialized FragmentedNotification,
	// in bytes, that Split produces and AddBytes accepts when no size is
	// configured: the RSB Spread transport's maxfragmentsize (100,000 octets).
	DefaultMaxFragmentSize = 100000

	// MinDataChunk is the fewest data bytes Split puts into a fragment of a
	// fragmented event (only the last may carry fewer). When fragment 0's header
	// or the event id of later fragments leaves less room than this, Split fails
	// with ErrHeaderTooLarge. RSB reserves the same 5 bytes of data space.
	MinDataChunk = 5

	// DefaultMaxEventSize bounds the payload of one event, in bytes (16 MiB).
	// The Assembler checks it against the bytes received before storing them;
	// a Splitter refuses larger events with ErrEventTooLarge.
	DefaultMaxEventSize = 16 << 20

	// DefaultMaxParts bounds num_data_parts of an event. It keeps the
	// per-event bookkeeping small no matter what count a fragment claims.
	DefaultMaxParts = 65536

	// DefaultMaxPartialEvents bounds the incomplete events one Assembler holds
	// at a time (the reliability design's per-stream partial-event cap). When a
	// new event starts while the bound is reached, the oldest partial event is
	// evicted and reported.
	DefaultMaxPartialEvents = 16

	// DefaultMaxBufferedBytes bounds the memory, in bytes, held by all partial
	// events of one Assembler together (data buffers by capacity plus the
	// bookkeeping charges below). Oldest partial events are evicted first.
	DefaultMaxBufferedBytes = 64 << 20

	// MaxRoom bounds each side of Config.Room: room for a Notification's
	// fields around its data, not a second buffer.
	MaxRoom = 4096

	// DefaultTimeout is how long a partial event may wait for its missing
	// fragments, counted from its first fragment. Two seconds suits unreliable
	// streams; reliable streams configure their retention time plus a margin.
	DefaultTimeout = 2 * time.Second

	// DefaultMaxPendingDrops bounds the Drop records waiting for the owner to
	// collect them with AppendDrops. Further records are discarded and counted
	// in Stats.DropRecordsLost; the per-reason counters stay exact.
	DefaultMaxPendingDrops = 1024

	// DefaultMaxRememberedDrops bounds the ids of dropped events the
	// Assembler remembers (about 60 bytes each), so that their later
	// fragments are refused (ReasonAfterDrop) instead of starting an event
	// that can never complete. Past the bound the oldest id is forgotten.
	DefaultMaxRememberedDrops = 4096

	// partialOverhead is charged to the byte budget for each partial event: the
	// partial record, its map entry and list links.
	partialOverhead = 256

	// partOverhead is charged to the byte budget for each fragment held aside
	// because it arrived before its predecessors (map entry and slice header).
	partOverhead = 64

	// senderIDSize is the length of an RSB participant id (an RFC 4122 UUID).
	senderIDSize = 16
)

// Limits of the buffers this package lends to its callers: the fragment and
// record buffers of publishers (Buf, RecordSlabs) and the reassembly buffers
// given back by borrowing subscribers (ReassemblyPool).
const (
	// ReassemblyPoolBytes and ReassemblyPoolBuffers bound the reassembly
	// buffers a ReassemblyPool keeps for reuse: room for a flow window's
	// worth of 64 KiB events or a few 1 MiB ones.
	ReassemblyPoolBytes   = 8 << 20
	ReassemblyPoolBuffers = 256

	// minBufPoolShift and maxBufPoolShift bound the pooled fragment
	// buffers: above 32 KiB (smaller ones come from the runtime's size
	// classes, whose memory it reuses) up to 64 MiB. Reuse spares a stream
	// of large events the page faults of fresh memory (docs/TUNING.md).
	minBufPoolShift = 15
	maxBufPoolShift = 26

	// RecordSlabSize is the size of the slabs the records of small
	// published events are carved from: one allocation for many events.
	RecordSlabSize = 64 << 10
	// MaxSlabRecord is the largest record carved from a slab; larger ones
	// are allocated alone.
	MaxSlabRecord = 4 << 10
	// slabBias is the hold a record slab keeps on its buffer while it
	// carves, counting down one per record carved (so that carving takes
	// no atomic operation): far more than the records a slab can hold.
	slabBias = 1 << 30
)
