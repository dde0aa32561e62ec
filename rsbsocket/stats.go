package rsbsocket

import "sync/atomic"

// DropReason says why a frame was not delivered. Append only: the values
// index Stats.Drops and name metric labels.
type DropReason int

const (
	// DropQueueFull: a connection's send queue was full, or the connection
	// was stalled (slow client).
	DropQueueFull DropReason = iota
	// DropFrameTooLarge: an inbound frame exceeded MaxFrameSize.
	DropFrameTooLarge
	// DropMalformed: an inbound frame was not a valid Notification.
	DropMalformed
	// DropTimeout: outbound frames lost because a write timed out.
	DropTimeout
	// DropClosed: outbound frames lost because their connection closed
	// before they were written.
	DropClosed
	// DropBadIntrospection: a Hello or Bye whose payload could not be used
	// for interest learning (the frame itself is still relayed).
	DropBadIntrospection
	// DropParticipantLimit: a Hello beyond MaxParticipants (the frame is
	// relayed; the connection then wants every event).
	DropParticipantLimit
	// DropHandshake: a connection that could not be greeted (the client
	// went away or did not read within HandshakeTimeout).
	DropHandshake

	// NumDropReasons is the number of drop reasons.
	NumDropReasons
)

var dropReasonNames = [NumDropReasons]string{
	"queue_full", "frame_too_large", "malformed", "timeout", "closed",
	"bad_introspection", "participant_limit", "handshake",
}

// String returns the reason's metric label.
func (r DropReason) String() string {
	if r < 0 || r >= NumDropReasons {
		return "unknown"
	}
	return dropReasonNames[r]
}

// DisconnectReason says why a connection ended. Append only: the values
// index Stats.Disconnects and name metric labels.
type DisconnectReason int

const (
	// DisconnectEOF: the client shut down its side in order.
	DisconnectEOF DisconnectReason = iota
	// DisconnectReadError: reading failed (reset, unexpected EOF in a frame).
	DisconnectReadError
	// DisconnectWriteError: writing failed.
	DisconnectWriteError
	// DisconnectTimeout: a write or the handshake timed out.
	DisconnectTimeout
	// DisconnectFrameTooLarge: the client sent a frame above MaxFrameSize.
	DisconnectFrameTooLarge
	// DisconnectMalformed: the client sent something that is not a
	// Notification.
	DisconnectMalformed
	// DisconnectSlowClient: the send queue overflowed, or the connection
	// stalled, under SlowClientDisconnect.
	DisconnectSlowClient
	// DisconnectShutdown: the server shut down.
	DisconnectShutdown

	// NumDisconnectReasons is the number of disconnect reasons.
	NumDisconnectReasons
)

var disconnectReasonNames = [NumDisconnectReasons]string{
	"eof", "read_error", "write_error", "timeout", "frame_too_large",
	"malformed", "slow_client", "shutdown",
}

// String returns the reason's metric label.
func (r DisconnectReason) String() string {
	if r < 0 || r >= NumDisconnectReasons {
		return "unknown"
	}
	return disconnectReasonNames[r]
}

// Stats is a snapshot of a Server's counters. Byte counts are frame bodies,
// without the 4-byte length headers.
type Stats struct {
	ConnsCurrent uint64 // connections open now
	ConnsTotal   uint64 // connections accepted since start
	ConnsRefused uint64 // connections closed at once: MaxConnections were open
	// ConnsNotAllowed counts the TCP connections closed at once because
	// their peer's address is outside Config.Allow.
	ConnsNotAllowed uint64
	FramesIn        uint64 // valid frames received from clients
	BytesIn         uint64
	FramesOut       uint64 // frames written to clients
	BytesOut        uint64
	QueueFrames     uint64 // frames waiting in all send queues now
	QueueBytes      uint64
	// Waits counts the times forwarding a frame a client published waited
	// for room in another connection's queue (back-pressure on the
	// publisher). Stalls counts the waits that timed out after
	// StallTimeout and marked the target connection stalled.
	Waits  uint64
	Stalls uint64
	// DirectWrites counts the writes a forwarding reader made on its own
	// goroutine to a connection without a writer (no goroutine hand-off);
	// WriterStarts counts the writer goroutines started for a backlog.
	DirectWrites uint64
	WriterStarts uint64
	// LargeGrown counts the frame bodies over 1 MiB (and up to 8 MiB)
	// read in growing steps because the server's 64 MiB budget for bodies
	// allocated whole from their headers was taken.
	LargeGrown uint64
	// SpinWaits counts the times a reader polled for the answer to a
	// relay instead of parking (Config.SpinWait); SpinHits the polls that
	// saw the answer, or the reader's own next frame, arrive.
	SpinWaits uint64
	SpinHits  uint64
	// SpinSkips counts the relays to an answering connection after which
	// a reader did not poll because too few recent polls saw the answer
	// (a busy host).
	SpinSkips uint64

	Drops       [NumDropReasons]uint64
	Disconnects [NumDisconnectReasons]uint64
}

// counters are the live, atomically updated counters behind Stats.
type counters struct {
	connsCurrent, connsTotal atomic.Int64
	connsRefused             atomic.Uint64
	connsNotAllowed          atomic.Uint64
	framesIn, bytesIn        atomic.Uint64
	framesOut, bytesOut      atomic.Uint64
	waits, stalls            atomic.Uint64
	directWrites, writers    atomic.Uint64
	spinWaits, spinHits      atomic.Uint64
	drops                    [NumDropReasons]atomic.Uint64
	disconnects              [NumDisconnectReasons]atomic.Uint64
}

// snapshot copies the counters.
func (c *counters) snapshot() Stats {
	s := Stats{
		ConnsCurrent:    uint64(max(c.connsCurrent.Load(), 0)),
		ConnsTotal:      uint64(c.connsTotal.Load()),
		ConnsRefused:    c.connsRefused.Load(),
		ConnsNotAllowed: c.connsNotAllowed.Load(),
		FramesIn:        c.framesIn.Load(),
		BytesIn:         c.bytesIn.Load(),
		FramesOut:       c.framesOut.Load(),
		BytesOut:        c.bytesOut.Load(),
		Waits:           c.waits.Load(),
		Stalls:          c.stalls.Load(),
		DirectWrites:    c.directWrites.Load(),
		WriterStarts:    c.writers.Load(),
		SpinWaits:       c.spinWaits.Load(),
		SpinHits:        c.spinHits.Load(),
	}
	for i := range c.drops {
		s.Drops[i] = c.drops[i].Load()
	}
	for i := range c.disconnects {
		s.Disconnects[i] = c.disconnects[i].Load()
	}
	return s
}

// drop counts n frames dropped for reason r.
func (c *counters) drop(r DropReason, n int) {
	if n > 0 {
		c.drops[r].Add(uint64(n))
	}
}
