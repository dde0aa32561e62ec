package qos

import (
	"errors"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// Errors returned by Sender.Send for datagrams it cannot number.
var (
	// ErrNoRecords: a DATA datagram must carry at least one record.
	ErrNoRecords = errors.New("qos: DATA datagram without records")
	// ErrSeqExhausted: the stream has used every sequence number up to MaxSeq.
	ErrSeqExhausted = errors.New("qos: stream sequence numbers exhausted")
)

// Output collects what the machines ask their owner to do. Every method that
// takes an *Output appends to it; the owner acts on the contents (transmit
// Datagrams, hand Deliveries to the assembler, surface Losses, reclaim
// Released) and then calls Reset before reusing it.
//
// For one ordered stream, Deliveries and the stream's Losses are each in
// sequence order and never overlap: merged by sequence number they give the
// exact order in which the stream resolved its datagrams.
type Output struct {
	// Datagrams are to be sent to the stream's group (DATA, repairs,
	// HEARTBEAT, GONE from senders; NACK from receivers), in order. The
	// owner must not modify them: a sender may still hold a DATA datagram for
	// repair, and repairs share the retained datagram's Records.
	Datagrams []*datagram.Datagram
	// Deliveries are the datagrams a receiver releases to its owner.
	Deliveries []Delivery
	// Losses are the unrecoverable losses a receiver reports.
	Losses []LossReport
	// Released are DATA datagrams a sender let go: evicted from its
	// retention, or on an unreliable stream numbered and kept for nothing.
	// The sender never touches them again; once the owner has transmitted
	// Datagrams (a repair or the datagram itself may be among them) it
	// may reuse their records' memory.
	Released []*datagram.Datagram
}

// Reset empties o, keeping its capacity, and drops its references.
func (o *Output) Reset() {
	clear(o.Datagrams)
	clear(o.Deliveries)
	clear(o.Released)
	o.Datagrams = o.Datagrams[:0]
	o.Released = o.Released[:0]
	o.Deliveries = o.Deliveries[:0]
	o.Losses = o.Losses[:0]
}

// Delivery is one received DATA datagram released by a receiver under its
// class's rule: its records in datagram order and its sequence number.
//
// Records delivered straight from an input datagram are that datagram's
// Records slice (aliasing the owner's receive buffer); records the receiver
// had to hold (an ordered stream waiting for a repair) are private copies
// the receiver never touches again. Either way the receiver never modifies
// them, and the owner must consume or copy them before it reuses the input
// datagram or its receive buffer (datagram.Decode reuses both).
type Delivery struct {
	// Stream is the stream the datagram came on.
	Stream datagram.StreamKey
	// Seq is the datagram's sequence number in Stream.
	Seq uint64
	// Records are the datagram's records (serialized FragmentedNotifications).
	Records [][]byte
}

// LossReport tells the owner that the datagrams of Range on Stream will never
// be delivered; the stream has moved past them. Every sequence number from
// the first a reliable receiver saw up to its edge is either delivered once
// or covered by exactly one LossReport.
type LossReport struct {
	// Stream is the stream that lost datagrams.
	Stream datagram.StreamKey
	// Range is the lost sequence numbers, inclusive.
	Range datagram.Range
	// Reason says why they cannot be repaired.
	Reason Reason
	// At is the time passed to the call that gave them up.
	At time.Time
}

// Reason says why a range was given up.
type Reason uint8

const (
	// ReasonNone is the zero Reason; no report carries it.
	ReasonNone Reason = iota
	// ReasonGone: the sender said it no longer has the range (GONE).
	ReasonGone
	// ReasonTrailPassed: a heartbeat announced a trail beyond the hole.
	ReasonTrailPassed
	// ReasonRetriesExhausted: the hole was NACKed NackTries times in vain.
	ReasonRetriesExhausted
	// ReasonReorderOverflow: an ordered receiver's hold buffer overflowed and
	// the oldest hole was skipped to release held datagrams.
	ReasonReorderOverflow
	// ReasonGapOverflow: more than MaxGaps holes; the oldest was given up.
	ReasonGapOverflow
	// ReasonMemoryLimit: the Receivers table exceeded MaxBytes and this
	// stream was made to give up a hole.
	ReasonMemoryLimit
	// ReasonStreamClosed: the stream was freed (Forget, idle or evicted to
	// make room) while holes were still open.
	ReasonStreamClosed
	// ReasonReassemblyEvicted: the datagrams arrived, but an event whose
	// fragments they carried was evicted from its reassembly buffer by
	// the buffer's bounds. The qos machines never report it; the owner of
	// the reassembly does, with the datagrams that carried the event.
	ReasonReassemblyEvicted

	// NumReasons is one more than the highest Reason; it sizes per-reason
	// counter arrays.
	NumReasons
)

var reasonNames = [NumReasons]string{
	"none", "gone", "trail-passed", "retries-exhausted", "buffer-overflow",
	"gap-overflow", "memory-limit", "stream-closed", "reassembly-evicted",
}

// String returns the reason's metric label, e.g. "trail-passed".
func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return "unknown"
}
