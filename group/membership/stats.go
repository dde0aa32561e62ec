package membership

import "sync/atomic"

// Stats counts what the membership did with its input; every dropped or
// ignored message is counted by reason.
type Stats struct {
	// StatesApplied counts peer states that updated the interest table.
	StatesApplied uint64
	// StatesStale counts states not newer than the one held (routine).
	StatesStale uint64
	// StatesDeparted counts states of instances that had left.
	StatesDeparted uint64
	// StatesWrongInstance counts states of another instance than the member's.
	StatesWrongInstance uint64
	// StatesRejected counts states refused for a limit (peers or groups).
	StatesRejected uint64
	// StatesPending counts states held until their member is known.
	StatesPending uint64
	// PendingDropped counts states dropped because the pending buffer was full
	// or the state too large to hold.
	PendingDropped uint64
	// MalformedMsgs counts interest messages and tables that failed to decode.
	MalformedMsgs uint64
	// UnknownMsgs counts user messages of an unknown kind.
	UnknownMsgs uint64
	// MetaInvalid counts member notifications with unreadable metadata.
	MetaInvalid uint64
	// TableTruncated counts peers left out of a push/pull state for size.
	TableTruncated uint64
	// Pushes and PushErrors count TCP pushes of local states (large ones,
	// and PushLocal's). PushesSkipped counts members the push loop left to
	// a PushLocal sending them the same state.
	Pushes, PushErrors, PushesSkipped uint64
	// EventsDropped counts member events that found the Events queue full.
	EventsDropped uint64
	// Conflicts counts node names claimed from two addresses.
	Conflicts uint64
	// AckDrops counts pushed states applied but not confirmed because
	// MaxAckSends confirmations were already being sent.
	AckDrops uint64
	// DeltasSent counts PushLocal's deltas instead of whole states;
	// DeltasApplied those received and applied; DeltaMisses those received
	// that did not start from the state held (the whole state was asked
	// for); FullOnRequest the whole states sent because a member asked, and
	// FullDrops those requests dropped with MaxAckSends already under way.
	DeltasSent, DeltasApplied, DeltaMisses, FullOnRequest, FullDrops uint64
	// JoinsOK counts the join loop's attempts that reached a seed;
	// JoinsFailed those that reached none.
	JoinsOK, JoinsFailed uint64
	// GossipMalformed counts packets and streams on the gossip port that
	// memberlist dropped as unreadable.
	GossipMalformed uint64
}

// counters are the live counters behind Stats.
type counters struct {
	applied, stale, departed, wrongInstance, rejected, pending, pendingDropped atomic.Uint64
	malformed, unknownMsgs, metaInvalid, tableTruncated, pushes, pushErrors    atomic.Uint64
	eventsDropped, conflicts, ackDrops, pushesSkipped                          atomic.Uint64
	deltasSent, deltasApplied, deltaMisses, fullOnRequest, fullDrops           atomic.Uint64
	joinsOK, joinsFailed                                                       atomic.Uint64
	gossipMalformed                                                            atomic.Uint64
}

// Stats returns a snapshot of the counters.
func (m *Membership) Stats() Stats {
	c := &m.stats
	return Stats{
		StatesApplied: c.applied.Load(), StatesStale: c.stale.Load(), StatesDeparted: c.departed.Load(),
		StatesWrongInstance: c.wrongInstance.Load(), StatesRejected: c.rejected.Load(),
		StatesPending: c.pending.Load(), PendingDropped: c.pendingDropped.Load(),
		MalformedMsgs: c.malformed.Load(), UnknownMsgs: c.unknownMsgs.Load(), MetaInvalid: c.metaInvalid.Load(),
		TableTruncated: c.tableTruncated.Load(), Pushes: c.pushes.Load(), PushErrors: c.pushErrors.Load(),
		EventsDropped: c.eventsDropped.Load(), Conflicts: c.conflicts.Load(), AckDrops: c.ackDrops.Load(),
		PushesSkipped: c.pushesSkipped.Load(),
		DeltasSent:    c.deltasSent.Load(), DeltasApplied: c.deltasApplied.Load(), DeltaMisses: c.deltaMisses.Load(),
		FullOnRequest: c.fullOnRequest.Load(), FullDrops: c.fullDrops.Load(),
		JoinsOK: c.joinsOK.Load(), JoinsFailed: c.joinsFailed.Load(),
		GossipMalformed: c.gossipMalformed.Load(),
	}
}
