package qos

import (
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// Sender is the sending side of one stream (this instance, a group, a class).
// It numbers DATA datagrams, and on reliable streams keeps them for repair,
// announces the retained range in heartbeats, answers NACKs with repairs or
// GONE, and rate-limits repairs. A reliable sender heartbeats every
// HeartbeatMax for as long as it exists; owners drop senders of streams no
// longer in use. It is not safe for concurrent use.
type Sender struct {
	key      datagram.StreamKey
	cfg      SenderConfig
	reliable bool
	highest  uint64 // last number given out; 0 before the first Send

	buf retainBuffer

	hbDue   time.Time     // next heartbeat
	hbEvery time.Duration // current heartbeat interval
	lastHB  time.Time     // last heartbeat (or first data): the ambient clock

	pending  seqHeap   // NACKed numbers waiting for repair tokens
	tokens   float64   // repair token bucket
	refilled time.Time // when tokens was last brought up to date

	stats SenderStats
}

// NewSender returns the sender of stream key. A zero cfg takes the defaults.
// Unreliable streams are only numbered.
func NewSender(key datagram.StreamKey, cfg SenderConfig) (*Sender, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Sender{
		key:      key,
		cfg:      cfg,
		reliable: key.Class.Reliable(),
		tokens:   float64(cfg.RepairBurst),
	}, nil
}

// Key returns the sender's stream.
func (s *Sender) Key() datagram.StreamKey { return s.key }

// Highest returns the last sequence number given out (0 before any).
func (s *Sender) Highest() uint64 { return s.highest }

// Trail returns the oldest retained sequence number, or Highest()+1 when
// nothing is retained (always so on unreliable streams).
func (s *Sender) Trail() uint64 { return s.buf.trail(s.highest) }

// Retained returns how many datagrams are kept for repair.
func (s *Sender) Retained() int { return s.buf.n }

// HeldBytes returns the memory counted for the retained datagrams (records,
// per-datagram overhead and ring slots).
func (s *Sender) HeldBytes() int { return s.buf.held() + s.pending.held() }

// Stats returns the sender's counters.
func (s *Sender) Stats() SenderStats { return s.stats }

// Send numbers the DATA datagram d the caller has filled with records: it
// sets d's Kind, Stream and Seq (clearing FlagRepair), keeps d for repair on
// reliable streams (evicting the oldest retained datagrams past the bounds)
// and appends d to out.Datagrams. It returns d's sequence number.
//
// The sender keeps d until it is evicted: the caller must not modify d or its
// Records (or Pieces) after Send.
func (s *Sender) Send(d *datagram.Datagram, now time.Time, out *Output) (uint64, error) {
	if d.RecordCount() == 0 {
		return 0, ErrNoRecords
	}
	if s.highest >= MaxSeq {
		return 0, ErrSeqExhausted
	}
	s.highest++
	d.Kind, d.Stream, d.Seq = datagram.KindData, s.key, s.highest
	d.Flags &^= datagram.FlagRepair
	s.stats.DataSent++
	s.stats.RecordsSent += uint64(d.RecordCount())
	out.Datagrams = append(out.Datagrams, d)
	if !s.reliable {
		out.Released = append(out.Released, d) // kept for nothing once sent
		return d.Seq, nil
	}
	s.evictAged(now, out)
	s.retain(d, now, out)
	s.afterData(now)
	return d.Seq, nil
}

// evict drops the oldest retained datagram, handing it to out.Released.
func (s *Sender) evict(out *Output) {
	out.Released = append(out.Released, s.buf.pop())
}

// retain keeps d (just numbered s.highest) within the count and byte bounds.
func (s *Sender) retain(d *datagram.Datagram, now time.Time, out *Output) {
	for s.buf.n >= s.cfg.RetainCount {
		s.evict(out)
		s.stats.EvictedCount++
	}
	s.buf.push(d, s.highest, now, s.cfg.RetainCount)
	for s.buf.n > 0 && s.buf.bytes > s.cfg.RetainBytes {
		s.evict(out)
		s.stats.EvictedBytes++
	}
}

// Acked tells a reliable sender that every receiver it paces has everything
// below edge: the lowest progress its tracked receivers acknowledged. It
// evicts the oldest retained datagrams below edge while more than
// RetainAcked of them are retained. A receiver that still waits for one of
// them holds its own progress there, so the caller passes an edge no higher
// than that of any receiver it knows; the newest RetainAcked stay for one
// it does not (fell silent, or not counted yet). The evicted datagrams go
// to out.Released.
func (s *Sender) Acked(edge uint64, out *Output) {
	if !s.reliable {
		return
	}
	edge = min(edge, s.highest+1) // a receiver cannot have more than was sent
	keep := uint64(s.cfg.RetainAcked)
	for s.buf.n > 0 && s.buf.first < edge && edge-s.buf.first > keep {
		s.evict(out)
		s.stats.EvictedAcked++
	}
}

// ReleaseAll evicts every retained datagram into out.Released, for an
// owner about to drop the sender. Their numbers are gone: NACKs for them
// are answered with GONE.
func (s *Sender) ReleaseAll(out *Output) {
	for s.buf.n > 0 {
		s.evict(out)
		s.stats.EvictedClosed++
	}
}

// evictAged drops retained datagrams older than RetainAge.
func (s *Sender) evictAged(now time.Time, out *Output) {
	for s.buf.n > 0 && now.Sub(s.buf.oldest().at) >= s.cfg.RetainAge {
		s.evict(out)
		s.stats.EvictedAge++
	}
}

// afterData restarts the heartbeat schedule: the first heartbeat comes
// HeartbeatMin after the latest data, but no later than HeartbeatMax after
// the previous one (the ambient heartbeat among continuous data).
func (s *Sender) afterData(now time.Time) {
	if s.lastHB.IsZero() {
		s.lastHB = now
	}
	s.hbEvery = s.cfg.HeartbeatMin
	s.hbDue = now.Add(s.cfg.HeartbeatMin)
	if ambient := s.lastHB.Add(s.cfg.HeartbeatMax); ambient.Before(s.hbDue) {
		s.hbDue = ambient
	}
}

// Tick performs what is due at now: evicting aged datagrams, sending queued
// repairs the rate limit now allows, and the heartbeat. Call it at
// NextDeadline (calling it earlier or more often is harmless).
func (s *Sender) Tick(now time.Time, out *Output) {
	if !s.reliable || s.highest == 0 {
		return
	}
	s.evictAged(now, out)
	s.serveRepairs(now, out)
	if !now.Before(s.hbDue) {
		s.heartbeat(now, out)
	}
}

// heartbeat emits HEARTBEAT(trail, highest) and doubles the interval up to
// HeartbeatMax.
func (s *Sender) heartbeat(now time.Time, out *Output) {
	out.Datagrams = append(out.Datagrams, &datagram.Datagram{
		Kind:    datagram.KindHeartbeat,
		Stream:  s.key,
		Trail:   s.buf.trail(s.highest),
		Highest: s.highest,
	})
	s.stats.Heartbeats++
	s.lastHB = now
	s.hbEvery = min(2*s.hbEvery, s.cfg.HeartbeatMax)
	s.hbDue = now.Add(s.hbEvery)
}

// NextDeadline returns when Tick must next be called, or the zero Time when
// nothing is scheduled (unreliable streams, or before the first Send).
// Age eviction alone sets no deadline; it happens on the next Send, NACK or
// heartbeat, at most HeartbeatMax late.
func (s *Sender) NextDeadline() time.Time {
	if !s.reliable || s.highest == 0 {
		return time.Time{}
	}
	due := s.hbDue
	if s.pending.len() > 0 {
		if t := s.tokenTime(); t.Before(due) {
			due = t
		}
	}
	return due
}
