package client

import (
	"sync"
	"sync/atomic"
)

// Events lent to listeners WithoutRetention come back once their handlers
// are done, to be decoded into again. A socket link's reader takes them
// from the link's stash a batch at a time, and a listener's goroutine
// gives them back a batch at a time (giveBacks): the two goroutines, often
// on two CPUs, then meet once per batch instead of once per event. Events
// made elsewhere (copies of a shared wire view) use the shared pool.

// eventPool holds the events without a home that listeners
// WithoutRetention gave back.
var eventPool = sync.Pool{New: func() any { return new(Event) }}

// takeEvent returns an event from the shared pool; the caller overwrites
// it whole.
func takeEvent() *Event { return eventPool.Get().(*Event) }

// clearEvent releases ev's slab and clears it, so that a pooled event
// keeps no frame body alive; it keeps its home.
func clearEvent(ev *Event) {
	s, home := ev.slab, ev.home
	*ev = Event{home: home}
	if s != nil {
		s.release()
	}
}

// giveBack returns one event whose handlers are done with it: to its
// home stash, or to the shared pool.
func giveBack(ev *Event) {
	clearEvent(ev)
	if ev.home != nil {
		ev.home.put([]*Event{ev})
		return
	}
	eventPool.Put(ev)
}

// eventStash holds the events a socket link's listeners gave back, at
// most eventStashMax, for the link's reader; what it has no room for goes
// to the shared pool, where the reader looks when the stash is empty. It
// empties itself after poolIdle without a take.
type eventStash struct {
	mu   sync.Mutex
	evs  []*Event
	trim idleTrim
	// misses counts the events its reader took from the shared pool (or
	// allocated) because the stash was empty, for tests.
	misses atomic.Uint64
}

func newEventStash() *eventStash {
	s := &eventStash{}
	s.trim = idleTrim{idle: poolIdle, empty: s.empty}
	return s
}

// take moves up to cap(dst)-len(dst) events into dst.
func (s *eventStash) take(dst []*Event) []*Event {
	s.trim.used()
	s.mu.Lock()
	k := min(len(s.evs), cap(dst)-len(dst))
	rest := len(s.evs) - k
	dst = append(dst, s.evs[rest:]...)
	clear(s.evs[rest:])
	s.evs = s.evs[:rest]
	s.mu.Unlock()
	return dst
}

// put keeps what room there is for of evs, cleared events of this stash;
// the rest goes to the shared pool.
func (s *eventStash) put(evs []*Event) {
	s.mu.Lock()
	k := min(len(evs), eventStashMax-len(s.evs))
	s.evs = append(s.evs, evs[:k]...)
	s.mu.Unlock()
	if k > 0 {
		s.trim.arm()
	}
	for _, ev := range evs[k:] {
		eventPool.Put(ev)
	}
}

// empty drops every stashed event.
func (s *eventStash) empty() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evs = nil
}

// giveBacks collects the events a listener's goroutine gave back and
// returns them to their stash a batch at a time (flush).
type giveBacks struct {
	home *eventStash
	evs  []*Event
}

// add gives ev back: to the batch for its home, or to the shared pool.
func (g *giveBacks) add(ev *Event) {
	clearEvent(ev)
	if ev.home == nil {
		eventPool.Put(ev)
		return
	}
	if ev.home != g.home {
		g.flush()
		g.home = ev.home
	}
	g.evs = append(g.evs, ev)
	if len(g.evs) >= eventBatch {
		g.flush()
	}
}

// flush returns the batch to its stash.
func (g *giveBacks) flush() {
	if len(g.evs) == 0 {
		return
	}
	g.home.put(g.evs)
	clear(g.evs)
	g.evs = g.evs[:0]
}

// readerEvents is a socket link reader's own few events to decode into,
// refilled from the link's stash a batch at a time.
type readerEvents struct {
	stash *eventStash
	spare []*Event
}

// get returns an event whose home is the stash, cleared: from the
// reader's own, refilled from the stash, else from the shared pool.
func (r *readerEvents) get() *Event {
	if len(r.spare) == 0 {
		if r.spare == nil {
			r.spare = make([]*Event, 0, eventBatch)
		}
		if r.spare = r.stash.take(r.spare); len(r.spare) == 0 {
			r.stash.misses.Add(1)
			ev := takeEvent()
			ev.home = r.stash
			return ev
		}
	}
	k := len(r.spare) - 1
	ev := r.spare[k]
	r.spare[k] = nil
	r.spare = r.spare[:k]
	return ev
}

// put takes back an event get returned that went to nobody, or drops it
// when the reader has its fill.
func (r *readerEvents) put(ev *Event) {
	clearEvent(ev)
	if len(r.spare) < cap(r.spare) {
		r.spare = append(r.spare, ev)
	}
}

// pushBatch holds the events a socket link's reader delivered to queued
// participants since it last flushed, in order per participant, so that
// each participant's queue takes them under one lock and its consumer is
// woken once. The reader flushes before it may wait for the socket and
// every eventBatch events.
type pushBatch struct {
	qs     []*queue
	quicks []quickTaker // quicks[i]: what may take qs[i]'s events quickly, or nil
	items  [][]item     // items[i] goes to qs[i]
	n      int
}

// add holds it for q, whose participant is quick (nil when none).
func (p *pushBatch) add(q *queue, quick quickTaker, it item) {
	p.n++
	for i, x := range p.qs {
		if x == q {
			p.items[i] = append(p.items[i], it)
			return
		}
	}
	k := len(p.qs)
	p.qs = append(p.qs, q)
	p.quicks = append(p.quicks, quick)
	if k < cap(p.items) {
		p.items = p.items[:k+1]
	} else {
		p.items = append(p.items, nil)
	}
	p.items[k] = append(p.items[k][:0], it)
}

// flush queues what it holds.
func (p *pushBatch) flush() {
	for i, q := range p.qs {
		q.pushMany(p.items[i])
	}
	p.drop()
}

// drop forgets what it holds, which the caller delivered otherwise.
func (p *pushBatch) drop() {
	for i := range p.qs {
		clear(p.items[i])
		p.items[i] = p.items[i][:0]
	}
	clear(p.qs)
	clear(p.quicks)
	p.qs, p.quicks, p.items, p.n = p.qs[:0], p.quicks[:0], p.items[:0], 0
}
