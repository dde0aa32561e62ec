// Package fragmentation owns the RSB fragmentation of events: it splits a
// Notification into FragmentedNotifications that each fit a size limit, and it
// reassembles them with an Assembler whose every resource is bounded.
//
// # Splitting
//
// Split and AppendSplit follow the RSB rule: fragment 0 carries the event id,
// the full header (scope, method, wire schema, meta data, causes, and any
// unknown fields) and the first data chunk; fragments 1..N-1 carry only the
// event id and their data chunk. Every fragment states num_data_parts = N and
// its own data_part index; N = 1 means the event was not fragmented (it is still
// wrapped). Sizes are computed exactly with protobuf wire arithmetic, so every
// serialized fragment is at most the requested size. AppendSplit writes the
// serialized fragments of one event into a single new backing array; a
// Splitter additionally reuses its header scratch space between events and
// enforces an event size limit.
//
// # Reassembly
//
// An Assembler is a pure state machine: no goroutines, no clock of its own. The
// owner feeds it fragments with the current time (Add for decoded messages,
// AddBytes for serialized ones from the network), calls Prune periodically (see
// NextDeadline), and collects Drop records with AppendDrops. Events are keyed
// by the event id (16-byte sender id and sequence number). Single-fragment
// events pass straight through; fragments of larger events are copied in index
// order into one data buffer, out-of-order ones are held aside until their
// turn. Inconsistent input (a different num_data_parts, an index out of range,
// a fragment 0 without header) drops the whole event; a duplicate fragment is
// dropped alone. Limits on event size, parts per event, partial events, total
// buffered bytes and age are checked before anything is allocated for them, and
// every drop is counted by Reason in Stats. The data buffers can come from
// the owner (Config.Alloc) and keep room before and after the data
// (Config.Room, TakeRoom), so that the owner can serialize the event again
// around its data without copying it.
//
// An Assembler remembers the ids of the last events it dropped
// (Config.MaxRememberedDrops) and refuses their later fragments
// (ReasonAfterDrop), which could no longer complete them; without this they
// would start a partial event that holds memory until it times out. It does
// not remember completed events: suppressing repeated events is the job of
// the stream receiver in front of it. LastEventID names the event of the
// fragment last offered, so that the owner can follow events by id without
// decoding their fragments again.
//
// An Assembler is owned by one goroutine; it is not safe for concurrent use.
//
// # The wire form on the daemon's hot path
//
// The daemon splits and wraps events without decoding them into messages:
//   - SplitPieces cuts a serialized Notification into fragments given as
//     head, data chunk (aliasing the body) and tail, which a datagram sends
//     gathered; SplitEvent encodes an Event's fields apart and copies its
//     payload once, straight into fragments that share one buffer. Both
//     follow the same rule and chunk balance as Split, byte for byte.
//   - AppendWhole, MarshalWhole and MarshalSized write the unfragmented
//     FragmentedNotification (num_data_parts 1, data_part 0) around a
//     Notification; UnwrapWhole finds the Notification in such a record
//     without decoding it, and tells a fragment of a split event apart.
//   - FrameAround serializes a reassembled event in place, into the room an
//     Assembler keeps around its data (Config.Room).
//
// # Buffers lent to the caller
//
// Buf is a pooled buffer that counts holds (Hold, Drop): the fragments of a
// large event split by SplitEvent, or a slab of small records carved by a
// RecordSlabs; the last Drop returns it to a pool of size classes an eighth
// of an octave apart, so that a steady stream writes into memory written
// before instead of faulting in fresh pages. A ReassemblyPool keeps the
// data buffers of reassembled events a borrowing subscriber gave back, for
// an Assembler's Config.Alloc. Every pool is bounded (params.go).
//
// The package imports the generated protocol messages and notification.
package fragmentation
