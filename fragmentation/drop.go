package fragmentation

import (
	"errors"
	"strconv"
)

// Reason says why the Assembler dropped a fragment or an event.
// ONLY APPEND TO THIS LIST: values index Stats.Dropped and metrics labels.
type Reason uint8

const (
	// ReasonDuplicate: a fragment already received arrived again. Only the
	// fragment is dropped; its event continues. No Drop record is made.
	ReasonDuplicate Reason = iota + 1
	// ReasonInconsistentCount: a fragment states a different num_data_parts
	// than earlier fragments of its event (or 0). The event is dropped.
	ReasonInconsistentCount
	// ReasonIndexOutOfRange: data_part >= num_data_parts. The event is dropped.
	ReasonIndexOutOfRange
	// ReasonTooManyParts: num_data_parts exceeds Config.MaxParts.
	ReasonTooManyParts
	// ReasonEventTooLarge: the event's data exceeds Config.MaxEventSize.
	ReasonEventTooLarge
	// ReasonHeaderMissing: fragment 0 carries no scope. The event is dropped.
	ReasonHeaderMissing
	// ReasonTimeout: the event stayed incomplete longer than Config.Timeout.
	ReasonTimeout
	// ReasonEvictedPartials: the oldest incomplete event made room for a new
	// one under Config.MaxPartialEvents.
	ReasonEvictedPartials
	// ReasonEvictedBytes: an incomplete event was evicted (oldest first), or a
	// fragment refused, to stay within Config.MaxBufferedBytes.
	ReasonEvictedBytes
	// ReasonBadEventID: the fragment has no event id, a sender id that is not
	// 16 bytes, or no sequence number.
	ReasonBadEventID
	// ReasonDecode: AddBytes could not decode the fragment (or it exceeds
	// Config.MaxFragmentSize). No Drop record is made.
	ReasonDecode
	// ReasonAfterDrop: a fragment of an event the Assembler already dropped
	// (for any reason but a duplicate, a bad event id or a decode failure)
	// arrived. Only the fragment is dropped; the event's Drop record was
	// made when it was dropped, so none is made again.
	ReasonAfterDrop

	// NumReasons is one more than the largest Reason; Stats.Dropped has this
	// many entries and entry 0 stays unused.
	NumReasons int = iota + 1
)

var reasonNames = [NumReasons]string{
	ReasonDuplicate:         "duplicate",
	ReasonInconsistentCount: "inconsistent_count",
	ReasonIndexOutOfRange:   "index_out_of_range",
	ReasonTooManyParts:      "too_many_parts",
	ReasonEventTooLarge:     "event_too_large",
	ReasonHeaderMissing:     "header_missing",
	ReasonTimeout:           "timeout",
	ReasonEvictedPartials:   "evicted_partials",
	ReasonEvictedBytes:      "evicted_bytes",
	ReasonBadEventID:        "bad_event_id",
	ReasonDecode:            "decode",
	ReasonAfterDrop:         "after_drop",
}

// String returns the reason as a metrics label, e.g. "timeout".
func (r Reason) String() string {
	if int(r) < NumReasons && reasonNames[r] != "" {
		return reasonNames[r]
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

// reasonErrs holds one preallocated error per Reason, so refusing a fragment
// does not allocate.
var reasonErrs = func() (errs [NumReasons]error) {
	for r := Reason(1); int(r) < NumReasons; r++ {
		errs[r] = &refusal{r}
	}
	return errs
}()

// refusal is the error Add returns for a refused fragment.
type refusal struct{ reason Reason }

func (e *refusal) Error() string {
	switch e.reason {
	case ReasonDuplicate:
		return ErrDuplicate.Error()
	case ReasonDecode:
		return ErrDecode.Error()
	}
	return ErrDropped.Error() + ": " + e.reason.String()
}

// Is makes a duplicate match ErrDuplicate, a decode failure ErrDecode and
// every other refusal ErrDropped.
func (e *refusal) Is(target error) bool {
	switch e.reason {
	case ReasonDuplicate:
		return target == ErrDuplicate
	case ReasonDecode:
		return target == ErrDecode
	}
	return target == ErrDropped
}

// ReasonOf returns the Reason carried by an error from Add or AddBytes, or 0
// if err is not such a refusal.
func ReasonOf(err error) Reason {
	var r *refusal
	if errors.As(err, &r) {
		return r.reason
	}
	return 0
}

// Drop reports an event (or a lone fragment) the Assembler gave up on.
type Drop struct {
	// SenderID and SequenceNumber are the event id (zero when unknown).
	SenderID       [16]byte
	SequenceNumber uint32
	// Reason says why.
	Reason Reason
	// Received is how many distinct fragments had been accepted; Total is the
	// event's num_data_parts (as claimed by its fragments).
	Received, Total uint32
	// Bytes is the number of data bytes that had been accepted.
	Bytes int
}

// Stats counts what an Assembler did. Counters only grow.
type Stats struct {
	// Fragments counts every call of Add and AddBytes.
	Fragments uint64
	// Delivered counts complete events returned, Unfragmented those of them
	// that were a single fragment.
	Delivered, Unfragmented uint64
	// Dropped counts drops by Reason: events for most reasons, fragments for
	// ReasonDuplicate, ReasonDecode, ReasonBadEventID and ReasonAfterDrop
	// (and for refused fragments that had no partial event).
	Dropped [NumReasons]uint64
	// DropRecordsLost counts Drop records discarded because
	// Config.MaxPendingDrops records were waiting.
	DropRecordsLost uint64
}

// TotalDropped sums Dropped over all reasons.
func (s Stats) TotalDropped() uint64 {
	var t uint64
	for _, v := range s.Dropped {
		t += v
	}
	return t
}
