package qos

import (
	"math/bits"

	"github.com/rsbd/rsbd/transport/datagram"
)

const dedupWords = DedupWindow / 64

// window remembers which of the DedupWindow numbers up to top an unreliable
// receiver delivered: bit seq%DedupWindow for seq in (top-DedupWindow, top].
type window struct {
	top  uint64
	bits [dedupWords]uint64
}

// reset empties the window below start = top+1. Numbers below the start
// count as delivered so that they are never counted as skipped.
func (w *window) reset(top uint64) {
	w.top = top
	for i := range w.bits {
		w.bits[i] = ^uint64(0)
	}
}

func (w *window) has(seq uint64) bool {
	return w.bits[seq%DedupWindow/64]&(1<<(seq%64)) != 0
}

func (w *window) set(seq uint64) { w.bits[seq%DedupWindow/64] |= 1 << (seq % 64) }

func (w *window) unset(seq uint64) { w.bits[seq%DedupWindow/64] &^= 1 << (seq % 64) }

// advance moves top up to to and returns how many numbers left the window
// without having been delivered.
func (w *window) advance(to uint64) uint64 {
	k := to - w.top
	if k >= DedupWindow {
		var set uint64
		for i := range w.bits {
			set += uint64(bits.OnesCount64(w.bits[i]))
			w.bits[i] = 0
		}
		w.top = to
		return DedupWindow - set + (k - DedupWindow)
	}
	var skipped uint64
	for seq := w.top + 1; seq <= to; seq++ {
		// seq takes the slot of seq-DedupWindow, which leaves the window.
		if !w.has(seq) {
			skipped++
		}
		w.unset(seq)
	}
	w.top = to
	return skipped
}

// unreliableData releases a DATA datagram of an unreliable stream by the
// class's rule, never waiting: above everything seen it is delivered (an
// ordered stream counts the numbers it jumps over as lost at once, an
// unordered one those that leave the window undelivered); below, an
// unordered stream delivers it unless it is a duplicate or out of the
// window, an ordered one drops it as late.
func (r *Receiver) unreliableData(d *datagram.Datagram, out *Output) {
	seq, w := d.Seq, &r.win
	switch {
	case seq > w.top:
		top := w.top
		skipped := w.advance(seq)
		if r.ordered {
			skipped = seq - top - 1
		}
		r.stats.UnreliableLost += skipped
	case w.top-seq >= DedupWindow:
		r.stats.LateDrops++
		return
	case w.has(seq):
		r.stats.Duplicates++
		return
	case r.ordered:
		r.stats.LateDrops++
		return
	}
	w.set(seq)
	r.deliver(seq, d.Records, out)
}
