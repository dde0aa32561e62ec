package qos

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// The simulation harness: one sender machine, 1-3 Receivers tables, and a
// simulated group network with seeded loss, duplication, reordering, delay
// and blackouts per datagram per receiver, in both directions (NACKs and
// heartbeats included). A virtual clock jumps to the next deadline of any
// machine or the next datagram arrival; there is no real time anywhere.

// simBase is the virtual clock's origin.
var simBase = time.Unix(1_700_000_000, 0)

// span is a virtual-time interval [from, to) relative to simBase.
type span struct{ from, to time.Duration }

// simConfig describes one scenario.
type simConfig struct {
	class      datagram.Class
	n          int           // datagrams to publish
	interval   time.Duration // between publications
	records    int           // records per datagram (default 1)
	recordSize int           // bytes per record (default 32, at least 16)
	receivers  int           // 1..3 (default 1)
	seed       uint64

	loss, dup, reorder float64       // probabilities per datagram per link
	reorderMin         time.Duration // extra delay of a reordered datagram
	reorderMax         time.Duration
	delay              time.Duration // one-way base delay (default 200 µs)
	blackouts          [][]span      // per receiver: everything to and from it dropped
	// drop, if set, drops the datagrams it returns true for (to: -1 the
	// sender, else a receiver).
	drop func(to int, d *datagram.Datagram) bool

	sender SenderConfig
	table  ReceiversConfig
	settle time.Duration // how long to run after the last publication at most
	// restartAt, if > 0, switches the sender to a new instance id after that
	// many publications.
	restartAt int
}

// simEvent is a datagram in flight.
type simEvent struct {
	at     time.Time
	serial uint64
	to     int // -1 the sender, else a receiver
	d      *datagram.Datagram
}

// simNode is one receiving daemon.
type simNode struct {
	local     datagram.InstanceID
	table     *Receivers
	count     []uint8         // deliveries per event id
	lastSeq   [8]uint64       // last delivered seq per sender generation
	delivered int             // distinct events delivered
	losses    []LossReport    // reports received
	lost      uint64          // sequence numbers covered by reports
	latency   []time.Duration // publication to delivery, per delivery
	deliverAt []time.Time     // when each event id was delivered
}

// sim is the harness state.
type sim struct {
	tb      testing.TB
	cfg     simConfig
	rng     *rand.Rand
	now     time.Time
	senders []*Sender // every instance used, the current one last
	nodes   []*simNode
	queue   []simEvent
	serial  uint64
	sent    int
	sentAt  []time.Time // per event id
	next    time.Time   // next publication
	lastPub time.Time
	out     Output
	steps   int
	// limits checked after every step
	senderCap, receiverCap int
	tableCfg               ReceiversConfig
	// counters
	nacksToSender int
}

func newSim(tb testing.TB, cfg simConfig) *sim {
	tb.Helper()
	if cfg.records == 0 {
		cfg.records = 1
	}
	if cfg.recordSize < 16 {
		cfg.recordSize = 32
	}
	if cfg.receivers == 0 {
		cfg.receivers = 1
	}
	if cfg.delay == 0 {
		cfg.delay = 200 * time.Microsecond
	}
	if cfg.settle == 0 {
		cfg.settle = 5 * time.Second
	}
	s := &sim{tb: tb, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.seed, 0x5eed)), now: simBase, next: simBase,
		sentAt: make([]time.Time, cfg.n)}
	s.addSender(1)
	for i := 0; i < cfg.receivers; i++ {
		local := datagram.InstanceID{0xA0, byte(i)}
		tcfg := cfg.table
		tcfg.Receiver.Rand = rand.New(rand.NewPCG(cfg.seed, uint64(i)))
		table, err := NewReceivers(local, tcfg)
		if err != nil {
			tb.Fatal(err)
		}
		s.nodes = append(s.nodes, &simNode{local: local, table: table, count: make([]uint8, cfg.n),
			deliverAt: make([]time.Time, cfg.n), latency: make([]time.Duration, 0, cfg.n)})
	}
	snd := s.sender().cfg
	s.senderCap = snd.RetainBytes + snd.RetainCount*ringSlotOverhead + 16*snd.MaxPendingRepairs
	s.tableCfg = s.nodes[0].table.cfg
	s.receiverCap = s.tableCfg.Receiver.MaxHeldBytes()
	return s
}

// addSender starts a sender with a fresh instance id.
func (s *sim) addSender(gen byte) {
	key := datagram.StreamKey{Instance: datagram.InstanceID{0x51, gen}, Group: datagram.GroupID{0x6e, 7}, Class: s.cfg.class}
	snd, err := NewSender(key, s.cfg.sender)
	if err != nil {
		s.tb.Fatal(err)
	}
	s.senders = append(s.senders, snd)
}

func (s *sim) sender() *Sender { return s.senders[len(s.senders)-1] }

// record builds record i of event id: the id, then a pattern derived from it.
func (s *sim) record(id uint64, i int) []byte {
	b := make([]byte, s.cfg.recordSize)
	binary.BigEndian.PutUint64(b, id)
	for j := 8; j < len(b); j++ {
		b[j] = byte(id*7 + uint64(i) + uint64(j))
	}
	return b
}

// intact reports whether b is record i of event id.
func (s *sim) intact(b []byte, id uint64, i int) bool {
	if len(b) != s.cfg.recordSize || binary.BigEndian.Uint64(b) != id {
		return false
	}
	for j := 8; j < len(b); j++ {
		if b[j] != byte(id*7+uint64(i)+uint64(j)) {
			return false
		}
	}
	return true
}

// publish sends the next event as one DATA datagram.
func (s *sim) publish() {
	if s.cfg.restartAt > 0 && s.sent == s.cfg.restartAt {
		s.addSender(byte(len(s.senders) + 1))
	}
	id := uint64(s.sent)
	d := &datagram.Datagram{}
	for i := 0; i < s.cfg.records; i++ {
		d.Records = append(d.Records, s.record(id, i))
	}
	s.sentAt[id] = s.now
	if _, err := s.sender().Send(d, s.now, &s.out); err != nil {
		s.tb.Fatalf("Send: %v", err)
	}
	s.sent++
	s.lastPub = s.now
	s.next = s.next.Add(s.cfg.interval)
	s.flush(-1)
}

// flush routes and checks what the machine at node (-1: sender) produced.
func (s *sim) flush(from int) {
	for _, d := range s.out.Datagrams {
		s.route(from, d)
	}
	if from >= 0 {
		s.consume(s.nodes[from])
	}
	s.out.Reset()
}

// route sends d from one machine to every other: the sender's datagrams to
// each receiver, a receiver's NACKs to the sender and the other receivers.
func (s *sim) route(from int, d *datagram.Datagram) {
	if from >= 0 {
		s.transmit(from, -1, d)
	}
	for i := range s.nodes {
		if i != from {
			s.transmit(from, i, d)
		}
	}
}

// transmit applies the link's faults to one datagram.
func (s *sim) transmit(from, to int, d *datagram.Datagram) {
	if s.blackedOut(from) || s.blackedOut(to) {
		return
	}
	delay := s.cfg.delay
	if d.Kind == datagram.KindData && d.Seq == 1 && d.Flags&datagram.FlagRepair == 0 {
		// The receivers joined before the stream began: its first datagram
		// reaches them (a receiver starts at the first datagram it sees).
		s.push(to, d, delay)
		return
	}
	if s.cfg.drop != nil && s.cfg.drop(to, d) {
		return
	}
	if s.rng.Float64() < s.cfg.loss {
		return
	}
	copies := 1
	if s.rng.Float64() < s.cfg.dup {
		copies = 2
	}
	for range copies {
		extra := time.Duration(0)
		if s.rng.Float64() < s.cfg.reorder {
			extra = s.cfg.reorderMin + time.Duration(s.rng.Int64N(int64(s.cfg.reorderMax-s.cfg.reorderMin)+1))
		}
		s.push(to, d, delay+extra)
	}
}

func (s *sim) blackedOut(node int) bool {
	if node < 0 || node >= len(s.cfg.blackouts) {
		return false
	}
	t := s.now.Sub(simBase)
	for _, b := range s.cfg.blackouts[node] {
		if t >= b.from && t < b.to {
			return true
		}
	}
	return false
}
