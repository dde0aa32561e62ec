package qos

import (
	"slices"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// gap is a hole: sequence numbers first..last not received. A pending gap
// is NACKed at due; a lost one (given up) waits on an ordered stream until
// it reaches the edge, where it is reported in sequence order.
type gap struct {
	first, last uint64
	due         time.Time // next NACK or give-up check
	since       time.Time // the first NACK since the last progress
	nacked      time.Time // when it was last NACKed; zero if never
	heard       uint64    // Receiver.repairsHeard at the last NACK
	tries       int32     // NACKs sent since the last progress
	lost        Reason    // ReasonNone while pending
}

// backoff draws the random delay before a NACK.
func (r *Receiver) backoff() time.Duration {
	if r.cfg.NackBackoff <= 0 {
		return 0
	}
	return time.Duration(r.rng.Int64N(int64(r.cfg.NackBackoff) + 1))
}

// addGap appends the hole first..last (above every tracked one).
func (r *Receiver) addGap(first, last uint64, now time.Time) {
	r.gaps = append(r.gaps, gap{first: first, last: last, due: now.Add(r.backoff()), heard: r.repairsHeard})
}

// gapIndex returns the index of the first gap whose last is >= seq.
func (r *Receiver) gapIndex(seq uint64) int {
	i, _ := slices.BinarySearchFunc(r.gaps, seq, func(g gap, s uint64) int {
		if g.last < s {
			return -1
		}
		return 1
	})
	return i
}

// fill removes seq from the pending gap holding it and reports whether there
// was one. A repair that fills a NACKed gap is a sample of the repair delay.
func (r *Receiver) fill(seq uint64, repair bool, now time.Time) bool {
	i := r.gapIndex(seq)
	if i == len(r.gaps) || r.gaps[i].first > seq || r.gaps[i].lost != ReasonNone {
		return false
	}
	if repair {
		r.stats.RepairsReceived++
		if at := r.gaps[i].nacked; !at.IsZero() && now.After(at) {
			r.sampleRepair(now.Sub(at))
		}
	}
	g := &r.gaps[i]
	switch {
	case g.first == g.last:
		r.gaps = slices.Delete(r.gaps, i, i+1)
	case seq == g.first:
		g.first++
	case seq == g.last:
		g.last--
	default:
		r.splitGap(i, seq+1)
		r.gaps[i].last = seq - 1
	}
	return true
}

// splitGap splits gap i into first..at-1 and at..last, both keeping its
// state. first < at <= last must hold.
func (r *Receiver) splitGap(i int, at uint64) {
	g := r.gaps[i]
	upper := g
	upper.first = at
	r.gaps[i].last = at - 1
	r.gaps = slices.Insert(r.gaps, i+1, upper)
}

// markLost gives up the pending parts of first..last for reason.
func (r *Receiver) markLost(first, last uint64, reason Reason) {
	for i := r.gapIndex(first); i < len(r.gaps) && r.gaps[i].first <= last; i++ {
		if r.gaps[i].lost != ReasonNone {
			continue
		}
		if r.gaps[i].first < first {
			r.splitGap(i, first)
			continue // the upper part is next
		}
		if r.gaps[i].last > last {
			r.splitGap(i, last+1)
		}
		r.gaps[i].lost = reason
	}
}

// settle reports given-up gaps. Unordered streams report them all at once;
// an ordered stream first releases the held datagrams below the front gap,
// and reports a given-up gap only once it is the front one, so that its
// deliveries and reports come out in sequence order.
func (r *Receiver) settle(now time.Time, out *Output) {
	if !r.ordered {
		r.reportLost(now, out)
		return
	}
	for {
		r.releaseHeld(out)
		if len(r.gaps) == 0 || r.gaps[0].lost == ReasonNone {
			return
		}
		n := r.lostRun(0)
		g := r.gaps[0]
		r.report(g.first, r.gaps[n-1].last, g.lost, now, out)
		r.gaps = slices.Delete(r.gaps, 0, n)
	}
}

// lostRun returns the end of the run of adjacent given-up gaps with one
// reason that starts at i.
func (r *Receiver) lostRun(i int) int {
	j := i + 1
	for j < len(r.gaps) && r.gaps[j].lost == r.gaps[i].lost && r.gaps[j].first == r.gaps[j-1].last+1 {
		j++
	}
	return j
}

// reportLost reports and removes every given-up gap (unordered streams).
func (r *Receiver) reportLost(now time.Time, out *Output) {
	kept := r.gaps[:0]
	for i := 0; i < len(r.gaps); {
		if r.gaps[i].lost == ReasonNone {
			kept = append(kept, r.gaps[i])
			i++
			continue
		}
		j := r.lostRun(i)
		r.report(r.gaps[i].first, r.gaps[j-1].last, r.gaps[i].lost, now, out)
		i = j
	}
	clear(r.gaps[len(kept):])
	r.gaps = kept
}

// enforceBounds gives up holes while the receiver exceeds MaxGaps or, when
// ordered, its hold bounds.
func (r *Receiver) enforceBounds(now time.Time, out *Output) {
	for len(r.gaps) > r.cfg.MaxGaps {
		if !r.giveUpOldest(ReasonGapOverflow, now, out) {
			break
		}
	}
	for len(r.held) > r.cfg.ReorderDatagrams || r.heldBytes > r.cfg.ReorderBytes {
		if !r.giveUpOldest(ReasonReorderOverflow, now, out) {
			break
		}
	}
}

// giveUpOldest gives up the oldest pending gap and reports whether there
// was one.
func (r *Receiver) giveUpOldest(reason Reason, now time.Time, out *Output) bool {
	for i := range r.gaps {
		if r.gaps[i].lost == ReasonNone {
			r.gaps[i].lost = reason
			r.settle(now, out)
			return true
		}
	}
	return false
}

// giveUpAll gives up every pending gap.
func (r *Receiver) giveUpAll(reason Reason, now time.Time, out *Output) {
	for i := range r.gaps {
		if r.gaps[i].lost == ReasonNone {
			r.gaps[i].lost = reason
		}
	}
	r.settle(now, out)
	r.updateDeadline()
}

// Shed gives up the receiver's oldest open hole for reason, releasing what
// an ordered stream held behind it, and reports whether there was one. The
// Receivers table uses it to get under MaxBytes.
func (r *Receiver) Shed(reason Reason, now time.Time, out *Output) bool {
	ok := r.giveUpOldest(reason, now, out)
	r.updateDeadline()
	return ok
}

// Tick NACKs the holes that are due (merged into as few NACK datagrams of up
// to MaxNackRanges ranges as possible) and gives up those that were NACKed
// NackTries times in a row, for at least GiveUpAfter, without the sender
// repeating anything on the stream meanwhile (a sender busy with other
// repairs is not given up on). Call it at NextDeadline (earlier or more
// often is harmless).
func (r *Receiver) Tick(now time.Time, out *Output) {
	if !r.reliable || r.deadline.IsZero() || r.deadline.After(now) {
		return
	}
	var nack *datagram.Datagram
	for i := range r.gaps {
		g := &r.gaps[i]
		if g.lost != ReasonNone || g.due.After(now) {
			continue
		}
		r.progress(g)
		if r.exhausted(g, now) {
			g.lost = ReasonRetriesExhausted
			continue
		}
		r.nacking(g, now)
		g.due = now.Add(r.retryInterval(g))
		nack = r.appendNack(nack, g.first, g.last, out)
	}
	r.settle(now, out)
	r.updateDeadline()
}

// exhausted reports whether g has had its NackTries NACKs in vain and has
// been waited for GiveUpAfter since the first of them: the count alone would
// give up on a sender that is alive but starved of CPU for a moment.
func (r *Receiver) exhausted(g *gap, now time.Time) bool {
	return int(g.tries) >= r.cfg.NackTries && now.Sub(g.since) >= r.cfg.GiveUpAfter
}

// nacking counts one more NACK of g (its own or another receiver's) sent at now.
func (r *Receiver) nacking(g *gap, now time.Time) {
	if g.tries == 0 {
		g.since = now
	}
	g.tries++
	g.nacked = now
}

// retryInterval is how long g waits before its next NACK: the NACK interval
// for its first NackTries NACKs, then doubling for each further one (at
// most NackIntervalMax) while the hole waits out GiveUpAfter.
func (r *Receiver) retryInterval(g *gap) time.Duration {
	d := r.nackInterval()
	for k := int(g.tries) - r.cfg.NackTries; k > 0 && d < r.cfg.NackIntervalMax; k-- {
		d *= 2
	}
	return min(d, r.cfg.NackIntervalMax)
}

// appendNack adds first..last to nack, merging with its last range when
// adjacent, or starts a new NACK datagram in out when nack is nil or full.
func (r *Receiver) appendNack(nack *datagram.Datagram, first, last uint64, out *Output) *datagram.Datagram {
	if nack != nil {
		if prev := &nack.Ranges[len(nack.Ranges)-1]; prev.Last+1 == first {
			prev.Last = last
			return nack
		}
	}
	if nack == nil || len(nack.Ranges) == MaxNackRanges {
		nack = &datagram.Datagram{
			Kind:   datagram.KindNack,
			Stream: datagram.StreamKey{Instance: r.local, Group: r.key.Group, Class: r.key.Class},
			Target: r.key.Instance,
			Ranges: make([]datagram.Range, 0, min(len(r.gaps), MaxNackRanges)),
		}
		out.Datagrams = append(out.Datagrams, nack)
		r.stats.NacksSent++
	}
	nack.Ranges = append(nack.Ranges, datagram.Range{First: first, Last: last})
	r.stats.NackRanges++
	return nack
}

// heardNack puts off this receiver's NACK for every pending gap lying inside
// a range of another receiver's NACK: the repair it asks for comes to the
// whole group.
func (r *Receiver) heardNack(d *datagram.Datagram, now time.Time) {
	r.stats.NacksHeard++
	if !r.reliable || !r.started {
		return
	}
	until := now.Add(r.nackInterval())
	for _, rg := range d.Ranges[:min(len(d.Ranges), MaxNackRanges)] {
		for i := r.gapIndex(rg.First); i < len(r.gaps) && r.gaps[i].first <= rg.Last; i++ {
			g := &r.gaps[i]
			if g.lost != ReasonNone || g.first < rg.First || g.last > rg.Last || !g.due.Before(until) {
				continue
			}
			// The heard NACK stands for this receiver's own: it counts as a
			// try, so that holes shared by several receivers are given up
			// no later than holes of one.
			r.progress(g)
			r.nacking(g, now)
			g.due = until.Add(r.backoff())
			r.stats.NacksSuppressed++
		}
	}
	r.updateDeadline()
}

// progress restarts the try count of g if the sender repeated something on
// the stream since g's last NACK: it is alive and working through its repair
// queue, so the hole is not given up on.
func (r *Receiver) progress(g *gap) {
	if g.heard != r.repairsHeard {
		g.tries, g.heard = 0, r.repairsHeard
	}
}

// updateDeadline recomputes the earliest due time of the pending gaps.
func (r *Receiver) updateDeadline() {
	r.deadline = time.Time{}
	for i := range r.gaps {
		g := &r.gaps[i]
		if g.lost == ReasonNone && (r.deadline.IsZero() || g.due.Before(r.deadline)) {
			r.deadline = g.due
		}
	}
}

// sampleRepair folds the delay of one repair into repairDelay (an
// exponentially weighted mean, weight 1/8, as TCP smooths its RTT).
func (r *Receiver) sampleRepair(d time.Duration) {
	if r.repairDelay == 0 {
		r.repairDelay = d
		return
	}
	r.repairDelay += (d - r.repairDelay) / 8
}

// nackInterval is how long a NACKed hole waits for its repair before it is
// NACKed again: NackInterval, or twice the smoothed repair delay when the
// sender answers slower than that, at most NackIntervalMax.
func (r *Receiver) nackInterval() time.Duration {
	return min(max(r.cfg.NackInterval, 2*r.repairDelay), r.cfg.NackIntervalMax)
}
