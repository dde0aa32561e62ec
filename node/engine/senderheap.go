package engine

import (
	"container/heap"
	"time"
)

// senderHeap orders the sender streams that have a deadline by it, so that
// the engine's timer fires at the earliest one exactly: a send moves its
// stream's heartbeat later, and a stale earliest deadline would wake the
// engine goroutine for nothing, holding the engine while a reader may want
// it.
type senderHeap []*senderState

func (h senderHeap) Len() int           { return len(h) }
func (h senderHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h senderHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].dueIdx, h[j].dueIdx = i, j
}

// Push and Pop serve container/heap; use noteSender and dropSender.
func (h *senderHeap) Push(x any) {
	st := x.(*senderState)
	st.dueIdx = len(*h)
	*h = append(*h, st)
}

// Pop removes the last element (container/heap moved it there).
func (h *senderHeap) Pop() any {
	old := *h
	st := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	st.dueIdx = -1
	return st
}

// noteSender files st under its current deadline, or takes it out when it
// has none. Sender deadlines change only when it sends, answers a NACK or
// ticks, and each of those notes it.
func (e *Engine) noteSender(st *senderState) {
	dl := st.s.NextDeadline()
	switch {
	case dl.IsZero():
		e.dropSender(st)
	case st.dueIdx >= 0:
		if !dl.Equal(st.due) {
			st.due = dl
			heap.Fix(&e.due, st.dueIdx)
		}
	default:
		st.due = dl
		heap.Push(&e.due, st)
	}
}

// dropSender takes st out of the deadline heap, if it is in it.
func (e *Engine) dropSender(st *senderState) {
	if st.dueIdx >= 0 {
		heap.Remove(&e.due, st.dueIdx)
	}
}

// senderDue returns the earliest deadline of any sender stream, zero when
// none has one.
func (e *Engine) senderDue() time.Time {
	if len(e.due) == 0 {
		return time.Time{}
	}
	return e.due[0].due
}

// tickSenders ticks the sender streams whose deadline passed and files
// them again under their next one. It reports whether any was due.
func (e *Engine) tickSenders(now time.Time) bool {
	ticked := false
	for len(e.due) > 0 && !e.due[0].due.After(now) {
		st := e.due[0]
		st.s.Tick(now, &e.out)
		ticked = true
		if dl := st.s.NextDeadline(); dl.IsZero() || dl.After(now) {
			e.noteSender(st)
		} else {
			// Still due (a repair the rate limit holds back): its next
			// tick comes with the next timer, not in this loop.
			st.due = now.Add(time.Nanosecond)
			heap.Fix(&e.due, st.dueIdx)
		}
	}
	return ticked
}
