package fragmentation

import (
	"time"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// Assembler reassembles events from their fragments under the bounds of a
// Config. It is a pure state machine: time comes in as arguments, drops go out
// as Drop records (AppendDrops) and Stats. It is not safe for concurrent use.
type Assembler struct {
	cfg      Config
	partials map[key]*partial
	oldest   *partial // creation order: oldest first, linked by newer
	newest   *partial
	buffered int // bytes charged by all partial events
	drops    []Drop
	gone     droppedIDs // the events dropped last
	stats    Stats
	last     key  // the event id of the fragment last offered
	lastOK   bool // last holds a valid id
	// room is the buffer, with Config.Room around its data, of the event
	// the last Add or AddBytes completed (TakeRoom); nil otherwise.
	room []byte
}

// key identifies an event: its sender id and sequence number.
type key struct {
	sender [senderIDSize]byte
	seq    uint32
}

// fragment is one FragmentedNotification as the Assembler needs it.
type fragment struct {
	key          key
	total, index uint32
	header       *rsbpb.Notification // fragment 0 only: its Notification
	headerSize   int                 // serialized size of header without data; -1 unknown
	data         []byte              // the data chunk; never retained
}

// NewAssembler returns an Assembler for cfg after filling in its defaults.
func NewAssembler(cfg Config) (*Assembler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Assembler{
		cfg:      cfg,
		partials: make(map[key]*partial, min(cfg.MaxPartialEvents, 64)),
		gone:     droppedIDs{limit: cfg.MaxRememberedDrops},
	}, nil
}

// Config returns the Assembler's configuration with defaults filled in.
func (a *Assembler) Config() Config { return a.cfg }

// Add offers one decoded fragment received at now. It returns the complete
// event when f completes one (a single-fragment event completes at once),
// nil and nil when f was stored, and nil and an error when f was refused: the
// error matches ErrDuplicate (f was a repeat; its event continues), ErrDropped
// (f's event, if any, was dropped, now or before; ReasonOf tells why) or
// ErrDecode (f or its Notification is nil). A fragment of an event dropped
// before (ReasonAfterDrop) is refused whatever it holds, as the event can no
// longer complete; the last Config.MaxRememberedDrops dropped events are
// remembered. Evicting or expiring other events does not make an
// error; those drops are reported through AppendDrops.
//
// Add takes ownership of f: fragment 0's Notification becomes the returned
// event (its Data is replaced by the reassembled data). Other fragments' data
// is copied, never retained.
func (a *Assembler) Add(now time.Time, f *rsbpb.FragmentedNotification) (*rsbpb.Notification, error) {
	a.stats.Fragments++
	a.room, a.lastOK = nil, false
	var fr fragment
	if r := fr.fromMessage(f); r != 0 {
		return nil, a.refuse(nil, &fr, r)
	}
	return a.add(now, &fr)
}

// AddBytes decodes a serialized FragmentedNotification received at now and
// offers it as Add does; decoding failures (including a fragment larger than
// Config.MaxFragmentSize) wrap ErrDecode. b is not retained.
func (a *Assembler) AddBytes(now time.Time, b []byte) (*rsbpb.Notification, error) {
	a.stats.Fragments++
	a.room, a.lastOK = nil, false
	var fr fragment
	if r, err := a.decode(b, &fr); r != 0 {
		a.refuse(nil, &fr, r)
		return nil, err
	}
	return a.add(now, &fr)
}

// TakeRoom returns the buffer of the event the last Add or AddBytes call
// completed, when Config.Room is set and the event was reassembled from
// several fragments: its Data lies at buf[Config.Room.Head:], followed by
// at least Config.Room.Tail spare bytes. Otherwise it returns nil. The
// buffer is the caller's from then on (with Alloc, it is the one Alloc
// gave); TakeRoom forgets it.
func (a *Assembler) TakeRoom() []byte {
	buf := a.room
	a.room = nil
	return buf
}

// LastEventID returns the event id of the fragment the last Add or AddBytes
// call was given, whatever became of it; ok is false when the fragment had
// no valid id (or did not decode). It lets the owner follow an event by its
// id without decoding its fragments again.
func (a *Assembler) LastEventID() (sender [16]byte, seq uint32, ok bool) {
	return a.last.sender, a.last.seq, a.lastOK
}

// Prune drops, as ReasonTimeout, every partial event whose first fragment
// arrived Config.Timeout or longer before now.
func (a *Assembler) Prune(now time.Time) {
	for p := a.oldest; p != nil; {
		next := p.newer
		if p.expired(now, a.cfg.Timeout) {
			a.dropPartial(p, ReasonTimeout)
		}
		p = next
	}
}

// NextDeadline returns when the next partial event expires, so the owner can
// schedule Prune; ok is false when there is none.
func (a *Assembler) NextDeadline() (deadline time.Time, ok bool) {
	for p := a.oldest; p != nil; p = p.newer {
		if d := p.created.Add(a.cfg.Timeout); !ok || d.Before(deadline) {
			deadline, ok = d, true
		}
	}
	return deadline, ok
}

// AppendDrops appends the Drop records made since the last call to dst and
// forgets them. Duplicates and decode failures make no record (see Stats).
func (a *Assembler) AppendDrops(dst []Drop) []Drop {
	dst = append(dst, a.drops...)
	a.drops = a.drops[:0]
	return dst
}

// Len returns the number of partial (incomplete) events held.
func (a *Assembler) Len() int { return len(a.partials) }

// BufferedBytes returns the bytes charged by all partial events: their data
// buffers by capacity, fragments held aside, headers and bookkeeping.
func (a *Assembler) BufferedBytes() int { return a.buffered }

// Stats returns a copy of the counters.
func (a *Assembler) Stats() Stats { return a.stats }

// add runs a fragment with a valid key through the checks and stores it.
func (a *Assembler) add(now time.Time, fr *fragment) (*rsbpb.Notification, error) {
	a.last, a.lastOK = fr.key, true
	var p *partial
	if len(a.partials) > 0 {
		if p = a.partials[fr.key]; p != nil && p.expired(now, a.cfg.Timeout) {
			a.dropPartial(p, ReasonTimeout)
			p = nil
		}
	}
	if p == nil && a.gone.has(fr.key) {
		a.stats.Dropped[ReasonAfterDrop]++
		return nil, reasonErrs[ReasonAfterDrop]
	}
	if r := a.check(p, fr); r != 0 {
		return nil, a.refuse(p, fr, r)
	}
	if fr.total == 1 {
		a.stats.Delivered++
		a.stats.Unfragmented++
		return fr.header, nil
	}
	if p == nil {
		if p = a.newPartial(now, fr); p == nil {
			return nil, reasonErrs[ReasonEvictedBytes]
		}
	} else if p.has(fr.index) {
		a.stats.Dropped[ReasonDuplicate]++
		return nil, reasonErrs[ReasonDuplicate]
	}
	return a.insert(p, fr)
}

// check returns why fr must be refused given its partial event p (nil if
// none), or 0.
func (a *Assembler) check(p *partial, fr *fragment) Reason {
	switch {
	case p != nil && p.total != fr.total:
		return ReasonInconsistentCount
	case fr.index >= fr.total:
		return ReasonIndexOutOfRange
	case fr.total > uint32(a.cfg.MaxParts):
		return ReasonTooManyParts
	case fr.index == 0 && len(fr.header.GetScope()) == 0:
		return ReasonHeaderMissing
	case len(fr.data) > a.cfg.MaxEventSize:
		return ReasonEventTooLarge
	}
	return 0
}

// refuse counts and records a refused fragment, dropping its partial event p
// if there is one, and returns the matching error.
func (a *Assembler) refuse(p *partial, fr *fragment, r Reason) error {
	if p != nil {
		a.dropPartial(p, r)
		return reasonErrs[r]
	}
	a.stats.Dropped[r]++
	if r != ReasonDuplicate && r != ReasonDecode {
		a.record(Drop{SenderID: fr.key.sender, SequenceNumber: fr.key.seq, Reason: r, Total: fr.total})
	}
	if remembers(r) {
		a.gone.add(fr.key)
	}
	return reasonErrs[r]
}

// dropPartial counts, records and removes a partial event.
func (a *Assembler) dropPartial(p *partial, r Reason) {
	a.stats.Dropped[r]++
	a.record(Drop{
		SenderID:       p.key.sender,
		SequenceNumber: p.key.seq,
		Reason:         r,
		Received:       p.received,
		Total:          p.total,
		Bytes:          p.bytes,
	})
	a.gone.add(p.key)
	a.remove(p)
}

// record keeps a Drop for AppendDrops, within Config.MaxPendingDrops.
func (a *Assembler) record(d Drop) {
	if len(a.drops) >= a.cfg.MaxPendingDrops {
		a.stats.DropRecordsLost++
		return
	}
	a.drops = append(a.drops, d)
}

// fromMessage fills fr from a decoded fragment; it returns ReasonDecode for a
// nil message or Notification and ReasonBadEventID for a bad event id.
func (fr *fragment) fromMessage(f *rsbpb.FragmentedNotification) Reason {
	if f == nil || f.Notification == nil {
		return ReasonDecode
	}
	n := f.Notification
	fr.total, fr.index, fr.data, fr.headerSize = f.GetNumDataParts(), f.GetDataPart(), n.Data, -1
	if fr.index == 0 {
		fr.header = n
	}
	id := n.GetEventId()
	return fr.setKey(id.GetSenderId(), id.GetSequenceNumber(), id != nil && id.SequenceNumber != nil)
}

// setKey sets fr.key; it returns ReasonBadEventID unless sender has 16 bytes
// and the sequence number is present.
func (fr *fragment) setKey(sender []byte, seq uint32, haveSeq bool) Reason {
	fr.key.seq = seq
	if len(sender) != senderIDSize || !haveSeq {
		return ReasonBadEventID
	}
	copy(fr.key.sender[:], sender)
	return 0
}
