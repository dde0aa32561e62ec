package fragmentation

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Sentinel errors of the package; returned errors wrap them.
var (
	// ErrHeaderTooLarge: fragment 0's header (or a later fragment's event id)
	// leaves no room for at least MinDataChunk data bytes within the fragment
	// size, or an event without data does not fit one fragment.
	ErrHeaderTooLarge = errors.New("fragmentation: header too large for the fragment size")
	// ErrEventTooLarge: the event exceeds the configured event size or part count.
	ErrEventTooLarge = errors.New("fragmentation: event too large")
	// ErrInvalidEventID: the Notification has no event id, or its sender id is
	// not 16 bytes, or its sequence number is missing.
	ErrInvalidEventID = errors.New("fragmentation: missing or invalid event id")
	// ErrInvalidConfig: a Config or SplitConfig field is out of range.
	ErrInvalidConfig = errors.New("fragmentation: invalid config")
	// ErrDecode: AddBytes could not decode a serialized FragmentedNotification.
	ErrDecode = errors.New("fragmentation: cannot decode fragment")
	// ErrDuplicate: the fragment was already received; it was dropped and its
	// event continues.
	ErrDuplicate = errors.New("fragmentation: duplicate fragment")
	// ErrDropped: the fragment was refused and its event, if any, was dropped;
	// the Drop record and Stats say why.
	ErrDropped = errors.New("fragmentation: event dropped")
	// ErrNotification is returned for a serialized Notification the
	// splitter cannot parse.
	ErrNotification = errors.New("fragmentation: malformed notification")
)

// Config bounds an Assembler. The zero value works: zero fields take the
// defaults of params.go. Negative values are invalid.
type Config struct {
	// MaxEventSize bounds the data bytes of one event (DefaultMaxEventSize).
	MaxEventSize int
	// MaxFragmentSize bounds a serialized fragment given to AddBytes
	// (DefaultMaxFragmentSize).
	MaxFragmentSize int
	// MaxParts bounds num_data_parts (DefaultMaxParts).
	MaxParts int
	// MaxPartialEvents bounds the incomplete events held at once
	// (DefaultMaxPartialEvents).
	MaxPartialEvents int
	// MaxBufferedBytes bounds the memory of all partial events together
	// (DefaultMaxBufferedBytes); it must be at least MaxEventSize.
	MaxBufferedBytes int
	// Timeout is how long a partial event may wait for missing fragments,
	// counted from its first fragment (DefaultTimeout).
	Timeout time.Duration
	// MaxPendingDrops bounds the Drop records not yet collected
	// (DefaultMaxPendingDrops).
	MaxPendingDrops int
	// MaxRememberedDrops bounds the ids of dropped events remembered so
	// that their later fragments are refused (DefaultMaxRememberedDrops).
	MaxRememberedDrops int
	// Alloc, when set, provides the data buffers of events being
	// reassembled: a slice of length 0 and capacity exactly capacity,
	// whatever its contents (the Assembler writes every byte it hands
	// out). A completed event's Data then keeps its buffer's capacity, so
	// that whoever delivers it can give the buffer back to Alloc's source
	// once nothing uses the event. Nil allocates.
	Alloc func(capacity int) []byte
	// Room, when set, keeps spare bytes before (Head) and after (Tail) the
	// data of every event that is reassembled from several fragments, in
	// the same buffer, so that whoever delivers the event can serialize it
	// around its data without copying the data (Assembler.TakeRoom). With
	// Alloc, the buffers asked for then include the room. The room is not
	// charged to MaxBufferedBytes; each side is at most MaxRoom.
	Room Room
}

// Room is the spare bytes around a reassembled event's data.
type Room struct {
	Head, Tail int
}

// DefaultConfig returns the Config with every default filled in.
func DefaultConfig() Config {
	return Config{
		MaxEventSize:     DefaultMaxEventSize,
		MaxFragmentSize:  DefaultMaxFragmentSize,
		MaxParts:         DefaultMaxParts,
		MaxPartialEvents: DefaultMaxPartialEvents,
		MaxBufferedBytes: DefaultMaxBufferedBytes,
		Timeout:          DefaultTimeout,
		MaxPendingDrops:  DefaultMaxPendingDrops,

		MaxRememberedDrops: DefaultMaxRememberedDrops,
	}
}

// withDefaults returns c with zero fields replaced by the defaults.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	c.MaxEventSize = orDefault(c.MaxEventSize, d.MaxEventSize)
	c.MaxFragmentSize = orDefault(c.MaxFragmentSize, d.MaxFragmentSize)
	c.MaxParts = orDefault(c.MaxParts, d.MaxParts)
	c.MaxPartialEvents = orDefault(c.MaxPartialEvents, d.MaxPartialEvents)
	c.MaxBufferedBytes = orDefault(c.MaxBufferedBytes, d.MaxBufferedBytes)
	c.MaxPendingDrops = orDefault(c.MaxPendingDrops, d.MaxPendingDrops)
	c.MaxRememberedDrops = orDefault(c.MaxRememberedDrops, d.MaxRememberedDrops)
	if c.Timeout == 0 {
		c.Timeout = d.Timeout
	}
	return c
}

// Validate reports whether c is usable: no negative field, MaxParts within
// the uint32 range of num_data_parts, and MaxBufferedBytes at least
// MaxEventSize once defaults are applied.
func (c Config) Validate() error {
	if c.MaxEventSize < 0 || c.MaxFragmentSize < 0 || c.MaxParts < 0 || c.MaxPartialEvents < 0 ||
		c.MaxBufferedBytes < 0 || c.Timeout < 0 || c.MaxPendingDrops < 0 ||
		c.MaxRememberedDrops < 0 {
		return fmt.Errorf("%w: negative limit", ErrInvalidConfig)
	}
	c = c.withDefaults()
	if uint64(c.MaxParts) > math.MaxUint32 {
		return fmt.Errorf("%w: MaxParts %d exceeds the uint32 range", ErrInvalidConfig, c.MaxParts)
	}
	if c.MaxBufferedBytes < c.MaxEventSize {
		return fmt.Errorf("%w: MaxBufferedBytes %d below MaxEventSize %d",
			ErrInvalidConfig, c.MaxBufferedBytes, c.MaxEventSize)
	}
	if c.Room.Head < 0 || c.Room.Head > MaxRoom || c.Room.Tail < 0 || c.Room.Tail > MaxRoom {
		return fmt.Errorf("%w: Room %+v outside 0..%d", ErrInvalidConfig, c.Room, MaxRoom)
	}
	return nil
}

// SplitConfig bounds a Splitter. The zero value works: zero fields take the
// defaults of params.go. Negative values are invalid.
type SplitConfig struct {
	// MaxFragmentSize bounds every serialized fragment (DefaultMaxFragmentSize).
	MaxFragmentSize int
	// MaxEventSize bounds the data bytes of an event (DefaultMaxEventSize).
	MaxEventSize int
	// MaxParts bounds the number of fragments of an event (DefaultMaxParts),
	// so that a Splitter never produces what a default Assembler refuses.
	MaxParts int
}

// DefaultSplitConfig returns the SplitConfig with every default filled in.
func DefaultSplitConfig() SplitConfig {
	return SplitConfig{
		MaxFragmentSize: DefaultMaxFragmentSize,
		MaxEventSize:    DefaultMaxEventSize,
		MaxParts:        DefaultMaxParts,
	}
}

// withDefaults returns c with zero fields replaced by the defaults.
func (c SplitConfig) withDefaults() SplitConfig {
	d := DefaultSplitConfig()
	c.MaxFragmentSize = orDefault(c.MaxFragmentSize, d.MaxFragmentSize)
	c.MaxEventSize = orDefault(c.MaxEventSize, d.MaxEventSize)
	c.MaxParts = orDefault(c.MaxParts, d.MaxParts)
	return c
}

// Validate reports whether c is usable: no negative field and MaxParts within
// the uint32 range of num_data_parts.
func (c SplitConfig) Validate() error {
	if c.MaxFragmentSize < 0 || c.MaxEventSize < 0 || c.MaxParts < 0 {
		return fmt.Errorf("%w: negative limit", ErrInvalidConfig)
	}
	if uint64(c.MaxParts) > math.MaxUint32 {
		return fmt.Errorf("%w: MaxParts %d exceeds the uint32 range", ErrInvalidConfig, c.MaxParts)
	}
	return nil
}

func orDefault(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}
