package qos

import (
	"math"
	"slices"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// HandleNack answers a NACK for this stream (Target = this instance, same
// group and class): ranges above the highest sent are ignored, the parts
// below the trail get one GONE datagram, and retained numbers are queued
// for repair unless already queued or repeated within RepairMerge. Repairs
// go out at once as far as the token bucket allows; the rest at Tick.
// Datagrams that are not such a NACK are counted and ignored.
func (s *Sender) HandleNack(d *datagram.Datagram, now time.Time, out *Output) {
	if d.Kind != datagram.KindNack || d.Target != s.key.Instance ||
		d.Stream.Group != s.key.Group || d.Stream.Class != s.key.Class || !s.reliable {
		s.stats.NacksIgnored++
		return
	}
	s.stats.NacksReceived++
	s.evictAged(now, out)
	ranges := d.Ranges
	if len(ranges) > MaxNackRanges {
		s.stats.NackRangesTruncated += uint64(len(ranges) - MaxNackRanges)
		ranges = ranges[:MaxNackRanges]
	}
	var gone []datagram.Range
	trail := s.buf.trail(s.highest)
	for _, rg := range ranges {
		s.stats.NackRanges++
		first, last := max(rg.First, FirstSeq), rg.Last
		if last > s.highest {
			if first <= s.highest {
				s.stats.NackSeqsAbove += last - s.highest
			} else if first <= last {
				s.stats.NackSeqsAbove += last - first + 1
			}
			last = s.highest
		}
		if first > last {
			continue
		}
		if first < trail {
			gone = append(gone, datagram.Range{First: first, Last: min(last, trail-1)})
			first = trail
		}
		if first <= last {
			s.queueRange(first, last, now)
		}
	}
	if len(gone) > 0 {
		s.sendGone(gone, now, out)
	}
	s.serveRepairs(now, out)
}

// queueRange queues the retained numbers first..last for repair.
func (s *Sender) queueRange(first, last uint64, now time.Time) {
	for seq := first; ; seq++ {
		e := s.buf.get(seq)
		switch {
		case e == nil:
		case e.queued || (!e.repaired.IsZero() && now.Sub(e.repaired) < s.cfg.RepairMerge):
			s.stats.RepairsMerged++
		case s.pending.len() >= s.cfg.MaxPendingRepairs:
			// The queue is full: drop the rest of the range without
			// walking it. The receiver asks again.
			s.stats.RepairsDropped += last - seq + 1
			return
		default:
			e.queued = true
			s.pending.push(seq)
		}
		if seq == last {
			return
		}
	}
}

// serveRepairs repeats queued datagrams while repair tokens last.
func (s *Sender) serveRepairs(now time.Time, out *Output) {
	s.refill(now)
	for s.pending.len() > 0 && s.tokens >= 1 {
		e := s.buf.get(s.pending.pop())
		if e == nil {
			s.stats.RepairsExpired++
			continue
		}
		e.queued = false
		e.repaired = now
		repair := *e.d
		repair.Flags |= datagram.FlagRepair
		out.Datagrams = append(out.Datagrams, &repair)
		s.tokens--
		s.stats.RepairsSent++
	}
}

// sendGone emits one GONE datagram for the evicted ranges (merged, at most
// MaxNackRanges), if a repair token is left.
func (s *Sender) sendGone(ranges []datagram.Range, now time.Time, out *Output) {
	s.refill(now)
	if s.tokens < 1 {
		s.stats.GoneDropped++
		return
	}
	s.tokens--
	ranges = mergeRanges(ranges)
	out.Datagrams = append(out.Datagrams, &datagram.Datagram{
		Kind:   datagram.KindGone,
		Stream: s.key,
		Ranges: ranges,
	})
	s.stats.GoneSent++
	s.stats.GoneRanges += uint64(len(ranges))
}

// mergeRanges sorts ranges, merges overlapping and adjacent ones in place and
// returns at most MaxNackRanges of them.
func mergeRanges(ranges []datagram.Range) []datagram.Range {
	slices.SortFunc(ranges, func(a, b datagram.Range) int {
		switch {
		case a.First < b.First:
			return -1
		case a.First > b.First:
			return 1
		}
		return 0
	})
	out := ranges[:1]
	for _, r := range ranges[1:] {
		last := &out[len(out)-1]
		if r.First <= last.Last || r.First == last.Last+1 {
			last.Last = max(last.Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out[:min(len(out), MaxNackRanges)]
}

// refill brings the token bucket up to now.
func (s *Sender) refill(now time.Time) {
	if !s.refilled.IsZero() && now.After(s.refilled) {
		s.tokens = min(float64(s.cfg.RepairBurst), s.tokens+now.Sub(s.refilled).Seconds()*s.cfg.RepairRate)
	}
	if s.refilled.IsZero() || now.After(s.refilled) {
		s.refilled = now
	}
}

// tokenTime returns when the bucket next holds enough tokens for a batch of
// the queued repairs (up to repairBatch), so that a long queue is served in
// batches rather than one timer per datagram.
func (s *Sender) tokenTime() time.Time {
	want := float64(min(s.pending.len(), repairBatch, s.cfg.RepairBurst))
	if s.tokens >= want {
		return s.refilled
	}
	wait := math.Ceil((want - s.tokens) / s.cfg.RepairRate * float64(time.Second))
	return s.refilled.Add(time.Duration(wait))
}

// seqHeap is a min-heap of sequence numbers: repairs go out lowest number
// first, so that a re-requested hole does not wait behind a long catch-up
// (ordered receivers hold everything behind it), and the oldest data, the
// next to be evicted, is repaired first.
type seqHeap []uint64

func (h seqHeap) len() int { return len(h) }

func (h *seqHeap) push(seq uint64) {
	*h = append(*h, seq)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p] <= s[i] {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *seqHeap) pop() uint64 {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(s) {
			break
		}
		if r := c + 1; r < len(s) && s[r] < s[c] {
			c = r
		}
		if s[i] <= s[c] {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}

// held returns the bytes of the heap's backing array.
func (h seqHeap) held() int { return 8 * cap(h) }
