package qos

import (
	"bytes"
	"slices"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// Receivers is the table of a daemon's receivers, one per remote stream. It
// opens a stream on its first original DATA, routes every datagram heard to
// its stream's receiver, keeps one timer schedule for all of them, and bounds
// them: at most MaxStreams streams (opening one more closes the one idle for
// longest), streams without DATA for IdleTimeout freed, and at most MaxBytes
// held by all receivers (the largest holders give up holes first). A sender
// restart is a new instance id and so a new stream; the old one is freed by
// Forget or once idle. Receivers is not safe for concurrent use.
type Receivers struct {
	local   datagram.InstanceID
	cfg     ReceiversConfig
	streams map[datagram.StreamKey]*stream
	newest  *stream // most recent DATA
	oldest  *stream // least recent DATA: the next to go idle
	timers  timerHeap
	bytes   int
	freed   ReceiverStats // counters of freed receivers
	stats   ReceiversStats
}

// stream is a Receivers entry.
type stream struct {
	r      *Receiver
	bytes  int       // r.HeldBytes() as last counted
	at     time.Time // deadline in the timer heap
	idx    int       // index in the timer heap, -1 when not in it
	newer  *stream
	older  *stream
	closed bool
}

// NewReceivers returns an empty table for the daemon whose instance id is
// local. A zero cfg takes the defaults.
func NewReceivers(local datagram.InstanceID, cfg ReceiversConfig) (*Receivers, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Receivers{
		local:   local,
		cfg:     cfg.withDefaults(),
		streams: make(map[datagram.StreamKey]*stream),
	}, nil
}

// Len returns the number of streams.
func (t *Receivers) Len() int { return len(t.streams) }

// HeldBytes returns the memory counted for all receivers (at most MaxBytes
// after every call).
func (t *Receivers) HeldBytes() int { return t.bytes }

// Lookup returns the receiver of key, or nil.
func (t *Receivers) Lookup(key datagram.StreamKey) *Receiver {
	if st := t.streams[key]; st != nil {
		return st.r
	}
	return nil
}

// Handle routes one datagram heard on a group: DATA, HEARTBEAT and GONE to
// the receiver of d.Stream (original DATA opens it), and NACKs to the
// receiver of the stream they ask to repair, for suppression. NACKs for the
// local instance's own streams belong to its Senders and are ignored here.
// The rules of Receiver.Handle apply.
func (t *Receivers) Handle(d *datagram.Datagram, now time.Time, out *Output) {
	key := d.Stream
	if d.Kind == datagram.KindNack {
		if d.Target == t.local {
			t.stats.Ignored++
			return
		}
		key.Instance = d.Target
	}
	st := t.streams[key]
	if st == nil {
		if !opensStream(d) && !t.youngHeartbeat(d) {
			t.stats.UnknownStream++
			return
		}
		st = t.open(key, now, out)
	}
	if d.Kind == datagram.KindData && d.Seq >= FirstSeq && d.Seq <= MaxSeq {
		t.touch(st) // the receiver's LastData becomes now
	}
	st.r.Handle(d, now, out)
	t.update(st)
	t.enforceMemory(now, out)
}

// opensStream reports whether d may open a stream: original DATA with a
// valid number and class. Repairs never do, or a receiver hearing a repair
// for another receiver would start in the past and NACK history.
func opensStream(d *datagram.Datagram) bool {
	return d.Kind == datagram.KindData && d.Flags&datagram.FlagRepair == 0 &&
		d.Seq >= FirstSeq && d.Seq <= MaxSeq && d.Stream.Class.Valid()
}

// youngHeartbeat reports whether d is a heartbeat of a reliable stream young
// enough to be taken from its start (ReceiverConfig.CatchUp).
func (t *Receivers) youngHeartbeat(d *datagram.Datagram) bool {
	c := t.cfg.Receiver.CatchUp
	return d.Kind == datagram.KindHeartbeat && d.Stream.Class.Reliable() && c > 0 &&
		d.Trail == FirstSeq && d.Highest >= FirstSeq && d.Highest <= uint64(c)
}

// Tick ticks the receivers that are due, frees idle streams and enforces
// MaxBytes. Call it at NextDeadline (earlier or more often is harmless).
func (t *Receivers) Tick(now time.Time, out *Output) {
	for n := len(t.timers); n > 0 && len(t.timers) > 0 && !t.timers[0].at.After(now); n-- {
		st := t.timers[0]
		st.r.Tick(now, out)
		t.update(st)
	}
	for t.oldest != nil && now.Sub(t.oldest.r.LastData()) >= t.cfg.IdleTimeout {
		t.free(t.oldest, now, out)
		t.stats.StreamsIdle++
	}
	t.enforceMemory(now, out)
}

// NextDeadline returns when Tick must next be called: the earliest receiver
// deadline or idle expiry, or the zero Time when the table is empty.
func (t *Receivers) NextDeadline() time.Time {
	var due time.Time
	if len(t.timers) > 0 {
		due = t.timers[0].at
	}
	if t.oldest != nil {
		idle := t.oldest.r.LastData().Add(t.cfg.IdleTimeout)
		if due.IsZero() || idle.Before(due) {
			due = idle
		}
	}
	return due
}

// Forget frees every stream of a departed sender instance, reporting their
// open holes (ReasonStreamClosed) and releasing what they held, and returns
// how many streams it freed.
func (t *Receivers) Forget(instance datagram.InstanceID, now time.Time, out *Output) int {
	var victims []*stream
	for key, st := range t.streams {
		if key.Instance == instance {
			victims = append(victims, st)
		}
	}
	// Map order is random; free in key order so outputs are reproducible.
	slices.SortFunc(victims, func(a, b *stream) int { return compareKeys(a.r.key, b.r.key) })
	for _, st := range victims {
		t.free(st, now, out)
		t.stats.StreamsForgotten++
	}
	return len(victims)
}

// Stats returns the table's counters, including the sums of its receivers'.
func (t *Receivers) Stats() ReceiversStats {
	s := t.stats
	s.ReceiverStats.Add(t.freed)
	for _, st := range t.streams {
		s.ReceiverStats.Add(st.r.Stats())
	}
	s.Streams, s.HeldBytes = len(t.streams), t.bytes
	return s
}

// open creates the stream of key, first closing the one idle for longest
// when the table is full.
func (t *Receivers) open(key datagram.StreamKey, now time.Time, out *Output) *stream {
	if len(t.streams) >= t.cfg.MaxStreams && t.oldest != nil {
		t.free(t.oldest, now, out)
		t.stats.StreamsEvicted++
	}
	st := &stream{r: newReceiver(t.local, key, t.cfg.Receiver), idx: -1}
	t.streams[key] = st
	t.linkNewest(st)
	t.stats.StreamsOpened++
	t.update(st)
	return st
}

// free closes a stream (reporting its open holes) and forgets it.
func (t *Receivers) free(st *stream, now time.Time, out *Output) {
	st.r.Close(now, out)
	st.closed = true
	t.freed.Add(st.r.Stats())
	delete(t.streams, st.r.key)
	t.unlink(st)
	if st.idx >= 0 {
		t.timers.remove(st.idx)
	}
	t.bytes -= st.bytes
}

// update recounts a stream's bytes and reschedules its timer.
func (t *Receivers) update(st *stream) {
	if st.closed {
		return
	}
	b := st.r.HeldBytes()
	t.bytes += b - st.bytes
	st.bytes = b
	due := st.r.NextDeadline()
	switch {
	case due.IsZero():
		if st.idx >= 0 {
			t.timers.remove(st.idx)
		}
	case st.idx >= 0:
		if !due.Equal(st.at) {
			st.at = due
			t.timers.fix(st.idx)
		}
	default:
		st.at = due
		t.timers.push(st)
	}
}

// enforceMemory gets the table under MaxBytes: the stream holding most gives
// up its oldest hole, repeatedly; if no stream has a hole left, the stream
// idle for longest is freed.
func (t *Receivers) enforceMemory(now time.Time, out *Output) {
	for t.bytes > t.cfg.MaxBytes {
		var victim *stream
		for _, st := range t.streams {
			if st.r.Gaps() > 0 && (victim == nil || st.bytes > victim.bytes ||
				st.bytes == victim.bytes && compareKeys(st.r.key, victim.r.key) < 0) {
				victim = st
			}
		}
		if victim != nil && victim.r.Shed(ReasonMemoryLimit, now, out) {
			t.stats.MemorySheds++
			t.update(victim)
			continue
		}
		if t.oldest == nil {
			return
		}
		t.free(t.oldest, now, out)
		t.stats.StreamsEvicted++
	}
}

// compareKeys orders stream keys (instance, group, class), so that choices
// among streams do not depend on map order.
func compareKeys(a, b datagram.StreamKey) int {
	if c := bytes.Compare(a.Instance[:], b.Instance[:]); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Group[:], b.Group[:]); c != 0 {
		return c
	}
	return int(a.Class) - int(b.Class)
}
