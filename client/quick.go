package client

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Quick delivery: a socket link's reader that is about to wait for the
// socket, holding one event for one queued participant that is idle (a
// Listener or a LocalServer method: its queue empty, its goroutine
// waiting), runs the participant's handlers itself instead of queueing
// the event. Waking the participant's goroutine would cost a hand-off
// between goroutines, which on a host with idle CPUs is most of a
// client's share of a round trip (the runtime wakes another CPU for the
// woken goroutine). Order is kept: the participant's goroutine and the
// reader take its turn (quickTurn) to run handlers, and the reader takes
// it only while nothing is queued.
//
// A handler must not hold up the connection for long, nor wait forever
// for an event only the reader could deliver. The waits the package knows
// of (a RemoteServer call's reply, a Reader's next event) hand the reading
// on to a new goroutine as they begin (Bus.handOnReading); any other
// handler that runs over a tick of the guard's timer (quickTick to twice
// that) hands it on then (sockReader.takeOver). The goroutine running the
// handler ends once it returns. A participant whose handlers ran longer
// than QuickBudget gets its next events through its queue, more of them
// the more often it happens (quickTurn.ran), so that slow handlers hold up
// the connection's other events only now and then.

// errHandedOn ends a reader's loop whose reading another goroutine took
// over.
var errHandedOn = errors.New("client: reading handed on")

// quickGuard is a reader's watch over the handlers it runs. Its value v
// is even while no handler runs, odd while one does; each arming and each
// disarming or takeover moves it on, so that a late tick or a late disarm
// never matches a later arming. A timer ticks every quickTick while the
// reader delivers quickly: a tick that finds the arming it found at the
// tick before still running hands the reading on. Arming does not touch
// the timer while it ticks: setting a timer earlier than the runtime's
// poller sleeps wakes the poller, the kind of wake-up quick delivery
// saves.
type quickGuard struct {
	v       atomic.Uint64
	used    atomic.Bool // an arming since the last tick
	ticking atomic.Bool // the timer is set
	seen    uint64      // v at the last tick; the ticks' own
	timer   *time.Timer // set before the reading starts, stopped
	period  time.Duration
}

// init makes the guard's timer, ticking every period, which runs fn on a
// goroutine of its own.
func (g *quickGuard) init(fn func(), period time.Duration) {
	g.timer = time.AfterFunc(time.Hour, fn)
	g.timer.Stop()
	g.period = period
}

// arm starts the watch of a handler run and returns the arming for
// disarm.
func (g *quickGuard) arm() uint64 {
	armed := g.v.Add(1)
	g.used.Store(true)
	g.start()
	return armed
}

// start sets the timer unless it ticks.
func (g *quickGuard) start() {
	if !g.ticking.Load() && g.ticking.CompareAndSwap(false, true) {
		g.timer.Reset(g.period)
	}
}

// disarm ends the watch of the arming armed and reports whether the
// reading is still the caller's (false: a tick handed it on).
func (g *quickGuard) disarm(armed uint64) bool {
	return g.v.CompareAndSwap(armed, armed+1)
}

// tick runs on the guard's timer and reports whether it took over the
// reading of a handler run armed since the tick before. It sets the timer
// again while the reader delivers quickly.
func (g *quickGuard) tick() (took bool) {
	v := g.v.Load()
	took = v%2 == 1 && v == g.seen && g.v.CompareAndSwap(v, v+1)
	g.seen = v
	if took {
		g.seen = v + 1
	}
	used := g.used.Swap(false)
	if !took && (used || v%2 == 1) {
		g.timer.Reset(g.period)
		return false
	}
	g.ticking.Store(false)
	// An arming between the Swap and the Store found the timer set.
	if g.used.Load() {
		g.start()
	}
	return took
}

// handOn ends the watch of the handler run in progress, if one is, and
// reports whether it did: the reading is then the caller's to hand on.
func (g *quickGuard) handOn() bool {
	v := g.v.Load()
	return v%2 == 1 && g.v.CompareAndSwap(v, v+1)
}

// handOnNow hands the reading on to a new goroutine if the reader is
// running a handler: the caller is about to wait for something only the
// reader delivers, and may be that handler.
func (rd *sockReader) handOnNow() {
	if rd.guard.handOn() {
		rd.l.bus.quickHandOns.Add(1)
		go rd.serve()
	}
}

// takeOver runs on the guard's timer: a handler run that was still armed
// at the tick before hands the reading on to the timer's goroutine. A
// reading taken from a run that has just ended is as safe.
func (rd *sockReader) takeOver() {
	if !rd.guard.tick() {
		return
	}
	rd.l.bus.quickHandOns.Add(1)
	rd.serve()
}

// handOnReading is called before a wait for something only the socket
// link's reader delivers: if the reader is running a handler right now
// (the caller may be that handler), a new goroutine takes the reading
// over, so that the wait cannot hold it up until the guard's next tick.
func (b *Bus) handOnReading() {
	if sl, ok := b.link.(*socketLink); ok && sl.reader != nil {
		sl.reader.handOnNow()
	}
}

// quickTaker is a queued participant a socket link's reader may hand an
// event itself while the participant is idle: a Listener, a LocalServer
// method.
type quickTaker interface {
	// quickTurn returns the participant's turn.
	quickTurn() *quickTurn
	// handleTurn handles it on the caller's goroutine, which holds the
	// turn, and gives the turn back.
	handleTurn(it item)
}

// quickTurn is held by whoever runs a participant's handlers: its own
// goroutine, which takes events from its queue holding it, or a socket
// link's reader delivering quickly.
type quickTurn struct {
	mu sync.Mutex
	// skip counts down the events the reader queues instead of
	// delivering them itself after slow handler runs, penalty in a row.
	skip, penalty atomic.Int32
}

// next waits for events of q and takes up to len(dst) of them holding the
// turn, which the caller gives back (mu.Unlock) once it handled them. It
// fails as q.await does. Taking and handling under the turn is what keeps
// a reader's quick delivery from overtaking events already taken.
func (t *quickTurn) next(ctx context.Context, q *queue, dst []item) (int, error) {
	for {
		t.mu.Lock()
		if n := q.tryPopInto(dst); n > 0 {
			return n, nil
		}
		t.mu.Unlock()
		if err := q.await(ctx); err != nil {
			return 0, err
		}
	}
}

// try takes the turn for a quick delivery to a participant whose queue
// is q, unless its handlers ran slow lately, it is busy, or q holds
// events (which come first) or is closed.
func (t *quickTurn) try(q *queue) bool {
	if t.skip.Load() > 0 {
		t.skip.Add(-1)
		return false
	}
	if !t.mu.TryLock() {
		return false
	}
	if q.len() > 0 || q.isClosed() {
		t.mu.Unlock()
		return false
	}
	return true
}

// ran notes how long a quick delivery's handlers ran: after a slow run
// the participant's next events go through its queue, one after a first
// slow run, twice as many after each further one, up to quickSkipMax; a
// fast run forgives.
func (t *quickTurn) ran(slow bool) {
	if !slow {
		t.penalty.Store(0)
		return
	}
	p := min(max(2*t.penalty.Load(), 1), quickSkipMax)
	t.penalty.Store(p)
	t.skip.Store(p)
}

// tryQuick delivers the reader's one held event to its participant on
// the reader's goroutine, when the event is the only one held and the
// participant is idle, and reports whether it did, with the arming of the
// guard the caller disarms. Once it has armed the guard the reading may
// be another goroutine's: nothing of the reader is touched.
func (rd *sockReader) tryQuick() (armed uint64, ok bool) {
	p := &rd.st.pushes
	if p.n != 1 || p.quicks[0] == nil {
		return 0, false
	}
	qt := p.quicks[0]
	turn := qt.quickTurn()
	if !turn.try(p.qs[0]) {
		return 0, false
	}
	it := p.items[0][0]
	p.drop()
	bus := rd.l.bus
	armed = rd.guard.arm()
	bus.quick.Add(1)
	start := nowMicros()
	qt.handleTurn(it)
	turn.ran(nowMicros()-start > QuickBudget.Microseconds())
	return armed, true
}

func (l *Listener) quickTurn() *quickTurn { return &l.turn }

// handleTurn calls the handlers with it on the caller's goroutine, which
// holds the listener's turn, and gives the turn back.
func (l *Listener) handleTurn(it item) {
	defer l.turn.mu.Unlock()
	l.r.q.pushed.Add(1)
	if l.r.q.isClosed() {
		if it.own != nil && l.r.borrow {
			giveBack(it.own)
		}
		return
	}
	ev := l.r.event(it, l.r.borrow)
	l.handle(ev)
	if l.r.borrow {
		giveBack(ev)
	}
}
