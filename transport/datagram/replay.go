package datagram

import "errors"

// Errors of the replay filter.
var (
	// ErrReplay means a datagram's counter was seen before or lies behind
	// the sender's window.
	ErrReplay = errors.New("datagram: replayed")
	// ErrStaleEpoch means a datagram comes from an older run of its sender
	// than one already seen.
	ErrStaleEpoch = errors.New("datagram: epoch of an older sender run")
)

// Replay is a receiver's replay filter: for each sender (a member name, the
// same across the sender's restarts) it keeps the run it is on (instance
// and epoch, the highest epoch seen) and which of the last ReplayWindow
// counters of that run arrived. A datagram of an older run, a counter seen
// before, or one behind the window is refused. It is a pure structure,
// bounded by its sender limit; callers serialize access.
type Replay struct {
	max     int
	senders map[string]*replayState
}

type replayState struct {
	inst  InstanceID
	epoch uint64
	top   uint64 // highest counter accepted
	bits  [ReplayWindow / 64]uint64
}

// NewReplay returns a filter tracking at most maxSenders senders (0 means
// DefaultReplaySenders); past it, an arbitrary sender is forgotten.
func NewReplay(maxSenders int) *Replay {
	if maxSenders <= 0 {
		maxSenders = DefaultReplaySenders
	}
	return &Replay{max: maxSenders, senders: map[string]*replayState{}}
}

// Check reports whether a datagram of sender (instance inst) with seal sl
// would be accepted, changing nothing: nil, ErrStaleEpoch or ErrReplay.
func (r *Replay) Check(sender string, inst InstanceID, sl Seal) error {
	st := r.senders[sender]
	if st == nil || sl.Epoch > st.epoch {
		return nil
	}
	if sl.Epoch < st.epoch || inst != st.inst {
		return ErrStaleEpoch
	}
	if sl.Counter > st.top {
		return nil
	}
	if st.top-sl.Counter >= ReplayWindow || st.seen(sl.Counter) {
		return ErrReplay
	}
	return nil
}

// Accept checks the datagram as Check does and, if it is accepted,
// records it. Only authenticated datagrams may be accepted: the filter
// trusts the epoch and counter it is given.
func (r *Replay) Accept(sender string, inst InstanceID, sl Seal) error {
	if err := r.Check(sender, inst, sl); err != nil {
		return err
	}
	st := r.senders[sender]
	switch {
	case st == nil:
		if len(r.senders) >= r.max {
			for k := range r.senders {
				delete(r.senders, k)
				break
			}
		}
		st = &replayState{}
		r.senders[sender] = st
		st.reset(inst, sl)
	case sl.Epoch > st.epoch:
		st.reset(inst, sl)
	case sl.Counter > st.top:
		st.advance(sl.Counter)
	}
	st.mark(sl.Counter)
	return nil
}

// Forget drops what the filter knows of sender if it is on the run of
// instance inst: a departure reported late does not wipe the state of the
// sender's next run.
func (r *Replay) Forget(sender string, inst InstanceID) {
	if st := r.senders[sender]; st != nil && st.inst == inst {
		delete(r.senders, sender)
	}
}

// Len returns the number of senders tracked.
func (r *Replay) Len() int { return len(r.senders) }

func (st *replayState) reset(inst InstanceID, sl Seal) {
	*st = replayState{inst: inst, epoch: sl.Epoch, top: sl.Counter}
}

// advance moves the window's top to c, clearing the bits it passes.
func (st *replayState) advance(c uint64) {
	if c-st.top >= ReplayWindow {
		st.bits = [ReplayWindow / 64]uint64{}
	} else {
		for x := st.top + 1; x <= c; x++ {
			st.bits[(x%ReplayWindow)/64] &^= 1 << (x % 64)
		}
	}
	st.top = c
}

func (st *replayState) seen(c uint64) bool {
	return st.bits[(c%ReplayWindow)/64]&(1<<(c%64)) != 0
}

func (st *replayState) mark(c uint64) {
	st.bits[(c%ReplayWindow)/64] |= 1 << (c % 64)
}
