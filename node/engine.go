package node

import (
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/node/sinks"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// rxBatch is a batch of received datagrams: in a reader's buffer (direct
// receive), or copied into a slab that is never reused (queued), so that
// records delivered from it may be retained.
type rxBatch struct {
	pkts []rxPkt
	// bytes is what a queued batch's slab holds (rxBytes); 0 for a batch
	// handled directly.
	bytes int
}

type rxPkt struct {
	data []byte
	from netip.AddrPort
}

// ctlReq runs fn on the engine goroutine (membership events, shutdown flush).
type ctlReq func(e *engine)

// engine owns every qos machine and assembler of the node; one goroutine
// (run) drives it, fed by bounded queues. Nothing in it is shared.
type engine struct {
	// mu guards every field below but the queues, the pending counts and
	// lastPublish; see run.
	mu sync.Mutex
	// pubsPending counts publishes submitted to the queue and not yet
	// handled (waiting for room, queued, or taken); rxPending receive
	// batches queued and not yet handled. The direct paths run only when
	// both are zero (idle), so order is kept.
	pubsPending, rxPending atomic.Int64
	// rxBytes is the datagram bytes of the queued receive batches, bounded
	// by Config.ReceiveQueueBytes.
	rxBytes atomic.Int64
	// lastPublish is when the last publish was offered directly or taken
	// from the queue (UnixNano).
	lastPublish atomic.Int64
	n           *Node
	pubs        *pubQueue
	rxCh        chan rxBatch
	ctlCh       chan ctlReq
	stop        chan struct{}
	done        chan struct{}
	senders     map[datagram.StreamKey]*senderState
	dirty       []*senderState // senders with pending records
	rcv         *qos.Receivers
	asmRel      *fragmentation.Assembler
	asmUnrel    *fragmentation.Assembler
	partials    partialOrigins // of asmRel's partial events
	out         qos.Output
	d           datagram.Datagram
	origin      map[datagram.InstanceID]netip.AddrPort // unicast address per sender instance
	tx          txBuffer
	scratch     scratch
	timer       *time.Timer
	// stats is the snapshot the metrics scrape reads; statsAt when it was
	// taken; retired sums the counters of freed sender streams.
	stats   atomic.Pointer[engineStats]
	statsAt time.Time
	retired qos.SenderStats
	// window is the flow-control window in datagrams; blocked holds the
	// reliable senders over it (publishes wait while it is not empty).
	window  uint64
	blocked map[*senderState]struct{}
	// batch is the publishes drainPublishes took from pubs; those from
	// next on are not handled yet.
	batch []pubReq
	next  int
	// acks tracks what this node last ACKed per reliable remote stream.
	acks     map[datagram.StreamKey]ackState
	ackDirty bool
	// want caches the wanted groups per published scope.
	want struct {
		gen  uint64
		m    map[scope.Scope]*wantEntry
		last *wantEntry // the entry found last: a run of one scope skips the map
	}
	// lastSender is the sender stream found last, so that a run of
	// publishes to one group skips the map; cleared when a stream is freed.
	lastSender *senderState
	// dl collects the deliveries of the current section (see deliver.go).
	dl []delivery
	// slabs takes the copies of bodies that stabilize moves out of a
	// reader's buffer.
	slabs sinks.BodySlabs
	// frags tracks the pooled buffers of sent fragments.
	frags fragOwners
	// free keeps released DATA datagrams and their record lists for the
	// next ones (datagramFree).
	free datagramFree
	// held says publishes made while a delivery ran wait in the senders'
	// pending datagrams for the delivering goroutine to flush them.
	held atomic.Bool
	// senderDue is the earliest deadline of any sender stream (see
	// noteSender), so that flushes need not scan every stream.
	senderDue time.Time
	// lastActive is when the engine last sent DATA or heard a NACK.
	lastActive time.Time
}

// scratch holds reusable slices of the hot path.
type scratch struct {
	groups []datagram.GroupID
	recs   [][]byte
	pieces [][][]byte
	drops  []fragmentation.Drop
}

func newEngine(n *Node) (*engine, error) {
	rcv, err := qos.NewReceivers(n.instance, n.cfg.Streams.Receivers)
	if err != nil {
		return nil, err
	}
	rel, unrel := n.cfg.Assembly, n.cfg.Assembly
	rel.Alloc, unrel.Alloc = n.reasm.Get, n.reasm.Get
	rel.Room = fragmentation.Room{Head: reasmHead, Tail: reasmTail}
	unrel.Room = rel.Room
	if rel.Timeout == 0 {
		rel.Timeout = DefaultReliableAssemblyTimeout
	}
	if rel.MaxPartialEvents == 0 {
		rel.MaxPartialEvents = DefaultReliablePartialEvents
	}
	if unrel.Timeout == 0 {
		unrel.Timeout = DefaultUnreliableAssemblyTimeout
	}
	e := &engine{
		n: n,
		// The engine holds at most as many taken as queued: each half.
		pubs:    newPubQueue((n.cfg.PublishQueue+1)/2, (n.cfg.PublishQueueBytes+1)/2),
		rxCh:    make(chan rxBatch, n.cfg.ReceiveQueue),
		ctlCh:   make(chan ctlReq, 64),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		senders: map[datagram.StreamKey]*senderState{},
		rcv:     rcv,
		origin:  map[datagram.InstanceID]netip.AddrPort{},
		timer:   time.NewTimer(time.Hour),
		window:  n.flowWindow(),
		blocked: map[*senderState]struct{}{},
		acks:    map[datagram.StreamKey]ackState{},
	}
	e.want.m = map[scope.Scope]*wantEntry{}
	e.partials.limit = 2 * rel.MaxPartialEvents
	if e.asmRel, err = fragmentation.NewAssembler(rel); err != nil {
		return nil, err
	}
	if e.asmUnrel, err = fragmentation.NewAssembler(unrel); err != nil {
		return nil, err
	}
	return e, nil
}

// run is the engine goroutine. It exits when stop is closed. Every touch of
// engine state holds mu: this goroutine takes it per input, and publishers
// and socket readers take it directly (direct, directReceive) when nothing
// is queued, which saves a goroutine wake-up per hop on a quiet bus.
func (e *engine) run() {
	defer close(e.done)
	for {
		e.mu.Lock()
		ready := e.publishesReady()
		e.mu.Unlock()
		select {
		case <-ready:
			e.mu.Lock()
			now := time.Now()
			e.drainPublishes(now)
			e.lastPublish.Store(now.UnixNano())
		case b := <-e.rxCh:
			e.mu.Lock()
			e.receive(b, time.Now())
			e.rxPending.Add(-1)
			e.rxBytes.Add(-int64(b.bytes))
		case fn := <-e.ctlCh:
			e.mu.Lock()
			fn(e)
		case <-e.timer.C:
			e.mu.Lock()
			e.tick(time.Now())
		case <-e.stop:
			return
		}
		e.flush(time.Now())
		e.queueDeliveries()
		e.mu.Unlock()
	}
}

// direct publishes p on the caller's goroutine when the engine is idle,
// nothing is queued, the flow window is open and publishes are sparse (a
// burst goes through the queue, where small events share datagrams). It
// reports whether it did.
//
// While a delivery runs (a handler replying, typically) a publish is taken
// directly however close it follows the previous one: its records wait in
// the senders' pending datagrams, where replies to a batch of events share
// datagrams, and the delivering goroutine sends them when its batch is done
// (flushReplies). A publisher on another goroutine that happens to run
// meanwhile is sent at that point too.
func (e *engine) direct(p pubReq) bool {
	if !e.idle() {
		// A burst is queued (the engine stamps lastPublish as it takes
		// them): this publish joins it without reading the clock.
		return false
	}
	now := time.Now()
	prev := time.Unix(0, e.lastPublish.Swap(now.UnixNano()))
	reply := e.n.dq.busy.Load()
	if (!reply && now.Sub(prev) < directGap) || !e.lockSoon(now) {
		return false
	}
	defer e.mu.Unlock()
	if !e.idle() || len(e.blocked) > 0 {
		return false
	}
	e.publish(p, now)
	if reply {
		e.held.Store(true)
		if e.n.dq.busy.Load() {
			// The delivering goroutine flushes after it set busy to false
			// or after its batch, whichever comes first; both follow this.
			return true
		}
	}
	e.flush(now)
	e.queueDeliveries()
	return true
}

// flushReplies sends what publishes made during a delivery left pending
// and reports whether there were any. The delivering goroutine calls it
// after each batch and after it gave the queue up; it holds no lock the
// engine waits for, so it may block on mu.
func (e *engine) flushReplies() bool {
	if !e.held.Swap(false) {
		return false
	}
	e.mu.Lock()
	e.flush(time.Now())
	e.queueDeliveries()
	e.mu.Unlock()
	return true
}

// queueDeliveries ends a section that does not deliver itself: what it
// collected goes to the delivery queue, in order. mu is held.
func (e *engine) queueDeliveries() {
	if len(e.dl) == 0 {
		return
	}
	e.n.dq.push(e.dl)
	clear(e.dl)
	e.dl = e.dl[:0]
}

// lockSoon takes mu if it comes free within directSpin. It never blocks
// for long: a section never waits for a delivery, so mu is held briefly.
func (e *engine) lockSoon(start time.Time) bool {
	for {
		if e.mu.TryLock() {
			return true
		}
		if time.Since(start) > directSpin {
			return false
		}
		runtime.Gosched()
	}
}

// directReceive handles b on the caller's (socket reader's) goroutine when
// the engine is idle and nothing is queued. It reports whether it did.
// b's datagrams lie in the reader's buffer: the deliveries they release are
// made before directReceive returns, by this goroutine when no other one
// delivers, else they are copied and queued.
func (e *engine) directReceive(b rxBatch) bool {
	if !e.idle() || !e.mu.TryLock() {
		return false
	}
	if !e.idle() {
		e.mu.Unlock()
		return false
	}
	now := time.Now()
	e.receive(b, now)
	e.flush(now)
	var own *[]delivery
	if len(e.dl) > 0 {
		if deliveryBytes(e.dl) <= e.n.inlineLimit() && e.n.dq.claim() {
			own = dlPool.Get().(*[]delivery)
			*own, e.dl = e.dl, (*own)[:0]
		} else {
			stabilize(e.dl, &e.slabs)
			e.queueDeliveries()
		}
	}
	e.mu.Unlock()
	if own != nil {
		e.n.deliverAll(*own, false)
		clear(*own)
		*own = (*own)[:0]
		dlPool.Put(own)
		e.n.dq.handOff()
		if e.flushReplies() {
			e.n.answered() // the reader delivering this batch replied
		}
	}
	return true
}

// deliveryBytes sums the sizes of ds.
func deliveryBytes(ds []delivery) int {
	n := 0
	for i := range ds {
		n += ds[i].size
	}
	return n
}

// dlPool recycles the delivery lists readers take out of the engine.
var dlPool = sync.Pool{New: func() any { return new([]delivery) }}

// drainPublishes handles queued publish requests so that small events share
// datagrams under load, without waiting when the queue is empty.
func (e *engine) drainPublishes(now time.Time) {
	bytes := 0
	for i := 0; i < maxDrain && bytes < maxDrainBytes && len(e.blocked) == 0; i++ {
		if e.next == len(e.batch) {
			e.batch, e.next = e.pubs.take(e.batch[:0]), 0
			if len(e.batch) == 0 {
				return
			}
		}
		p := e.batch[e.next]
		e.batch[e.next] = pubReq{} // the batch's memory goes back to the queue
		e.next++
		e.publish(p, now)
		e.pubsPending.Add(-1)
		bytes += p.size
	}
}

// idle reports whether no publish and no receive batch is waiting for the
// engine.
func (e *engine) idle() bool { return e.pubsPending.Load() == 0 && e.rxPending.Load() == 0 }

// publishesReady returns the channel that wakes run for publishes: nil
// while flow control holds them back. When publishes are left over from
// the last drain, taken or still queued, it makes sure the channel is
// ready, as a drain that stopped early (maxDrain, flow control) has no
// push behind it to signal.
func (e *engine) publishesReady() chan struct{} {
	if len(e.blocked) > 0 {
		return nil // flow control: take no publishes until ACKs arrive
	}
	if e.next < len(e.batch) || e.pubs.len() > 0 {
		e.pubs.signal()
	}
	return e.pubs.ready
}

// tick drives every machine's timers.
func (e *engine) tick(now time.Time) {
	if !e.senderDue.IsZero() && !e.senderDue.After(now) {
		e.senderDue = time.Time{}
		for _, st := range e.senders {
			if dl := st.s.NextDeadline(); !dl.IsZero() && !dl.After(now) {
				st.s.Tick(now, &e.out)
			}
			e.noteSender(st)
		}
	}
	e.rcv.Tick(now, &e.out)
	e.sendAcks(now, true)
	e.recheckBlocked(now)
	e.asmRel.Prune(now)
	e.asmUnrel.Prune(now)
	e.countAssemblyDrops()
	e.expireSenders(now)
}

// flush packs pending records, transmits what the machines produced,
// delivers what they released and re-arms the timer.
func (e *engine) flush(now time.Time) {
	e.packPending(now)
	e.sendAcks(now, false)
	e.handleOutput(now)
	e.publishStats(now)
	e.rearm(now)
}

// handleOutput acts on e.out: collects the deliveries (made after the
// section, see deliver.go), transmits the datagrams, collects the loss
// reports and, transmission done, reclaims the released datagrams' pooled
// buffers.
func (e *engine) handleOutput(now time.Time) {
	for len(e.out.Datagrams) > 0 || len(e.out.Deliveries) > 0 || len(e.out.Losses) > 0 || len(e.out.Released) > 0 {
		for _, d := range e.out.Deliveries {
			e.deliverRecords(d, now)
		}
		e.transmit(e.out.Datagrams)
		for _, l := range e.out.Losses {
			e.dl = append(e.dl, delivery{kind: deliverLoss, loss: &l})
		}
		// Transmitted: what the senders let go may now be reused.
		for _, d := range e.out.Released {
			e.frags.release(d)
			e.free.put(d)
		}
		e.out.Reset()
	}
}

// noteSender lowers senderDue to st's deadline. senderDue may run early
// (a sender's deadline moved later), never late: sender deadlines change
// only when it sends, answers a NACK or ticks, and each of those notes it.
func (e *engine) noteSender(st *senderState) {
	if dl := st.s.NextDeadline(); !dl.IsZero() && (e.senderDue.IsZero() || dl.Before(e.senderDue)) {
		e.senderDue = dl
	}
}

// rearm sets the timer to the earliest deadline of any machine.
func (e *engine) rearm(now time.Time) {
	next := now.Add(time.Second)
	consider := func(t time.Time) {
		if !t.IsZero() && t.Before(next) {
			next = t
		}
	}
	consider(e.senderDue)
	consider(e.rcv.NextDeadline())
	if e.ackDirty {
		consider(now.Add(ackInterval))
	}
	if len(e.blocked) > 0 {
		consider(now.Add(ackTimeout / 4))
	}
	if t, ok := e.asmRel.NextDeadline(); ok {
		consider(t)
	}
	if t, ok := e.asmUnrel.NextDeadline(); ok {
		consider(t)
	}
	if !e.timer.Stop() {
		select {
		case <-e.timer.C:
		default:
		}
	}
	e.timer.Reset(max(next.Sub(now), 0))
}
