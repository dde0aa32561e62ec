package engine

import (
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/node/sinks"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// Packet is one received datagram: its bytes and where it came from.
type Packet struct {
	Data []byte
	From netip.AddrPort
}

// rxBatch is a batch of received datagrams: in a reader's buffer (direct
// receive), or copied into a slab that is never reused (queued), so that
// records delivered from it may be retained.
type rxBatch struct {
	pkts []Packet
	// bytes is what a queued batch's slab holds (rxBytes); 0 for a batch
	// handled directly.
	bytes int
}

// ctlReq runs fn on the engine goroutine (membership events, shutdown flush).
type ctlReq func(e *Engine)

// Engine owns every qos machine and assembler of a node. One goroutine
// (Run) drives it, fed by bounded queues; publishers and UDP readers enter
// it directly when it is idle (see doc.go). Create it with New.
type Engine struct {
	// mu guards every field below but the queues, the pending counts and
	// lastPublish; see Run.
	mu sync.Mutex
	// pubsPending counts publishes submitted to the queue and not yet
	// handled (waiting for room, queued, or taken); rxPending receive
	// batches queued and not yet handled. The direct paths run only when
	// both are zero (idle), so order is kept.
	pubsPending, rxPending atomic.Int64
	// lastStreams is the stream count Streams read last (see there).
	lastStreams atomic.Pointer[StreamCounts]
	// rxBytes is the datagram bytes of the queued receive batches, bounded
	// by Config.ReceiveQueueBytes.
	rxBytes atomic.Int64
	// lastPublish is when the last publish was offered directly or taken
	// from the queue (UnixNano).
	lastPublish atomic.Int64
	cfg         Config
	env         Env
	m           *metrics.Metrics
	log         *slog.Logger
	// capacity is the largest record a DATA datagram carries.
	capacity int
	dq       *Queue
	pubs     *pubQueue
	rxCh     chan rxBatch
	ctlCh    chan ctlReq
	stop     chan struct{}
	stopOnce sync.Once
	senders  map[datagram.StreamKey]*senderState
	dirty    []*senderState // senders with pending records
	rcv      *qos.Receivers
	asmRel   *fragmentation.Assembler
	asmUnrel *fragmentation.Assembler
	partials partialOrigins // of asmRel's partial events
	out      qos.Output
	d        datagram.Datagram
	origin   map[datagram.InstanceID]netip.AddrPort // unicast address per sender instance
	tx       txBuffer
	scratch  scratch
	timer    *time.Timer
	// stats is the snapshot the metrics scrape reads; statsAt when it was
	// taken; retired sums the counters of freed sender streams.
	stats   atomic.Pointer[Stats]
	statsAt time.Time
	retired qos.SenderStats
	// window is the flow-control window in datagrams; blocked holds the
	// reliable senders over it (publishes wait while it is not empty).
	window  uint64
	blocked map[*senderState]struct{}
	// batch is the publishes drainPublishes took from pubs; those from
	// next on are not handled yet.
	batch []Request
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
	// dl collects the deliveries of the current section (see Queue).
	dl []Delivery
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
	// due orders the sender streams by deadline (noteSender), so that
	// ticks need not scan every stream.
	due senderHeap
	// lastActive is when the engine last sent DATA or heard a NACK.
	lastActive time.Time
	// paths counts the receive paths and timer wake-ups (Paths).
	paths paths
	// holding says a Hold is under way: the direct paths queue instead of
	// waiting for the engine.
	holding atomic.Bool
}

// scratch holds reusable slices of the hot path.
type scratch struct {
	groups []datagram.GroupID
	recs   [][]byte
	pieces [][][]byte
	drops  []fragmentation.Drop
}

// New returns an engine for cfg (zero fields take their defaults) that
// sends and delivers through env. Start it with Run on a goroutine of its
// own and end it with Stop.
func New(cfg Config, env Env) (*Engine, error) {
	cfg.applyDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := env.validate(); err != nil {
		return nil, err
	}
	rcv, err := qos.NewReceivers(cfg.Instance, cfg.Streams.Receivers)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:      cfg,
		env:      env,
		m:        env.Metrics,
		log:      env.Log,
		capacity: RecordCapacity(cfg.MaxDatagram),
		dq:       newQueue(),
		// The engine holds at most as many taken as queued: each half.
		pubs:    newPubQueue((cfg.PublishQueue+1)/2, (cfg.PublishQueueBytes+1)/2),
		rxCh:    make(chan rxBatch, cfg.ReceiveQueue),
		ctlCh:   make(chan ctlReq, 64),
		stop:    make(chan struct{}),
		senders: map[datagram.StreamKey]*senderState{},
		rcv:     rcv,
		origin:  map[datagram.InstanceID]netip.AddrPort{},
		timer:   time.NewTimer(time.Hour),
		window:  FlowWindow(cfg),
		blocked: map[*senderState]struct{}{},
		acks:    map[datagram.StreamKey]ackState{},
	}
	e.tx.m = e.m
	e.want.m = map[scope.Scope]*wantEntry{}
	rel, unrel := cfg.assemblers()
	e.partials.limit = 2 * rel.MaxPartialEvents
	if e.asmRel, err = fragmentation.NewAssembler(rel); err != nil {
		return nil, err
	}
	if e.asmUnrel, err = fragmentation.NewAssembler(unrel); err != nil {
		return nil, err
	}
	return e, nil
}

// Run is the engine goroutine; it returns once Stop was called. Every
// touch of engine state holds mu: this goroutine takes it per input, and
// publishers and socket readers take it directly (Submit, Receive) when
// nothing is queued, which saves a goroutine wake-up per hop on a quiet
// bus.
func (e *Engine) Run() {
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
			e.paths.timer.Add(1)
			e.mu.Lock()
			if !e.tick(time.Now()) {
				e.paths.idle.Add(1)
			}
		case <-e.stop:
			return
		}
		e.flush(time.Now())
		e.queueDeliveries()
		e.mu.Unlock()
	}
}

// Stop makes Run return and the publishers waiting for room give up
// (ErrStopped). It is idempotent.
func (e *Engine) Stop() { e.stopOnce.Do(func() { close(e.stop) }) }

// Deliveries returns the queue the engine collects deliveries into, for
// the node's delivering goroutine.
func (e *Engine) Deliveries() *Queue { return e.dq }
