package transport

import (
	"errors"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/transport/datagram"
)

// ErrNoSealer is returned by NewGuard without a Sealer.
var ErrNoSealer = errors.New("transport: guard without a sealer")

// SenderFunc names the cluster member whose daemon runs sender instance
// inst, and reports whether there is one.
type SenderFunc func(inst datagram.InstanceID) (name string, ok bool)

// GuardConfig configures a Guard.
type GuardConfig struct {
	// Sealer holds the keyring and the cluster label. Required.
	Sealer *datagram.Sealer
	// Instance is this daemon's instance: its own datagrams, looped back
	// by a joined group, are set aside unopened.
	Instance datagram.InstanceID
	// Epoch stamps every datagram sealed here: one per run of the daemon,
	// growing across its restarts. Zero means the time of NewGuard in
	// nanoseconds since 1970.
	Epoch uint64
	// MaxSenders bounds the replay filter; 0 means
	// datagram.DefaultReplaySenders.
	MaxSenders int
}

// GuardStats counts what a Guard did to datagrams.
type GuardStats struct {
	// Sealed counts datagrams sealed, Opened those authenticated and
	// passed on.
	Sealed, Opened uint64
	// Unsealed counts datagrams dropped because they came in clear,
	// Auth those that failed authentication (forged, corrupted, of
	// another label, or malformed seals), UnknownKey those sealed with a
	// key not in the ring, UnknownSender those of an instance no member
	// runs, Replay those seen before or of an older run of their sender.
	Unsealed, Auth, UnknownKey, UnknownSender, Replay uint64
	// Own counts this daemon's own datagrams set aside.
	Own uint64
	// SealErrors counts datagrams that could not be sealed (not sent).
	SealErrors uint64
}

// AddDrops adds the datagrams the Guard dropped to dc, by the reason
// rsbd_drops_total gives them.
func (s GuardStats) AddDrops(dc *metrics.DropCounts) {
	dc[metrics.DropUnsealed] += s.Unsealed
	dc[metrics.DropAuthFailed] += s.Auth
	dc[metrics.DropUnknownKey] += s.UnknownKey
	dc[metrics.DropUnknownSender] += s.UnknownSender
	dc[metrics.DropReplay] += s.Replay
	dc[metrics.DropSendError] += s.SealErrors
}

// Guard seals the data plane: every datagram sent through a Conn it wraps
// is sealed with the primary key, stamped with this run's epoch and the
// next counter, and every datagram received through a Handler it wraps is
// passed on only if it is sealed with a key of the ring, authentic, from
// an instance a cluster member runs, and neither seen before nor of an
// older run of its sender (datagram.Replay). Checks that need no
// decryption come first, so a flood of forged datagrams costs no AES and
// allocates nothing. The keyring and the member lookup can be replaced at
// any time. A Guard is safe for concurrent use.
type Guard struct {
	sealer  atomic.Pointer[datagram.Sealer]
	senders atomic.Pointer[SenderFunc]
	own     datagram.InstanceID
	epoch   uint64
	counter atomic.Uint64

	mu     sync.Mutex // guards replay
	replay *datagram.Replay

	sealed, opened, unsealed, auth, unknownKey    atomic.Uint64
	unknownSender, replayed, ownDrops, sealErrors atomic.Uint64
}

// NewGuard returns a Guard sealing with cfg.Sealer. Until SetSenders is
// called it knows no member, and drops every datagram it receives.
func NewGuard(cfg GuardConfig) (*Guard, error) {
	if cfg.Sealer == nil {
		return nil, ErrNoSealer
	}
	g := &Guard{own: cfg.Instance, epoch: cfg.Epoch, replay: datagram.NewReplay(cfg.MaxSenders)}
	if g.epoch == 0 {
		g.epoch = uint64(time.Now().UnixNano())
	}
	g.sealer.Store(cfg.Sealer)
	return g, nil
}

// SetSealer replaces the keyring: datagrams are sealed with its primary
// key from now on, and opened with its keys only.
func (g *Guard) SetSealer(s *datagram.Sealer) {
	if s != nil {
		g.sealer.Store(s)
	}
}

// Sealer returns the keyring in force.
func (g *Guard) Sealer() *datagram.Sealer { return g.sealer.Load() }

// SetSenders sets the member lookup.
func (g *Guard) SetSenders(fn SenderFunc) { g.senders.Store(&fn) }

// Forget drops the replay state of a member's run (instance inst) that has
// left the cluster.
func (g *Guard) Forget(name string, inst datagram.InstanceID) {
	g.mu.Lock()
	g.replay.Forget(name, inst)
	g.mu.Unlock()
}

// Epoch returns the epoch this Guard seals with.
func (g *Guard) Epoch() uint64 { return g.epoch }

// Stats returns a snapshot of the counters.
func (g *Guard) Stats() GuardStats {
	return GuardStats{
		Sealed: g.sealed.Load(), Opened: g.opened.Load(),
		Unsealed: g.unsealed.Load(), Auth: g.auth.Load(), UnknownKey: g.unknownKey.Load(),
		UnknownSender: g.unknownSender.Load(), Replay: g.replayed.Load(),
		Own: g.ownDrops.Load(), SealErrors: g.sealErrors.Load(),
	}
}

// Conn returns c sealing every datagram it sends.
func (g *Guard) Conn(c Conn) Conn { return &sealedConn{Conn: c, g: g} }

// Handler returns h behind the Guard: it sees only the datagrams that pass,
// opened in place (their Data a prefix of what was read).
func (g *Guard) Handler(h Handler) Handler {
	return func(batch []Packet) {
		pp := guardPkts.Get().(*[]Packet)
		out := (*pp)[:0]
		for _, p := range batch {
			if b, ok := g.open(p.Data); ok {
				out = append(out, Packet{Data: b, From: p.From})
			}
		}
		if len(out) > 0 {
			h(out)
		}
		clear(out)
		*pp = out[:0]
		guardPkts.Put(pp)
	}
}

var guardPkts = sync.Pool{New: func() any { return new([]Packet) }}

// open runs the checks on one received datagram and returns it opened.
func (g *Guard) open(b []byte) ([]byte, bool) {
	id, sl, err := datagram.SealedKey(b)
	switch {
	case errors.Is(err, datagram.ErrUnsealed):
		g.unsealed.Add(1)
		return nil, false
	case err != nil:
		g.auth.Add(1)
		return nil, false
	}
	s := g.sealer.Load()
	if !s.HasKey(id) {
		g.unknownKey.Add(1)
		return nil, false
	}
	inst := datagram.InstanceID(b[8:24])
	if inst == g.own {
		g.ownDrops.Add(1)
		return nil, false
	}
	name, ok := g.lookup(inst)
	if !ok {
		g.unknownSender.Add(1)
		return nil, false
	}
	g.mu.Lock()
	err = g.replay.Check(name, inst, sl)
	g.mu.Unlock()
	if err != nil {
		g.replayed.Add(1)
		return nil, false
	}
	plain, sl, err := s.Open(b)
	if err != nil {
		g.auth.Add(1)
		return nil, false
	}
	g.mu.Lock()
	err = g.replay.Accept(name, inst, sl)
	g.mu.Unlock()
	if err != nil { // the same datagram came twice at once, on two sockets
		g.replayed.Add(1)
		return nil, false
	}
	g.opened.Add(1)
	return plain, true
}

func (g *Guard) lookup(inst datagram.InstanceID) (string, bool) {
	fn := g.senders.Load()
	if fn == nil {
		return "", false
	}
	return (*fn)(inst)
}

// sealedConn is a Conn whose sends are sealed by its Guard. It is not a
// GatherConn: sealing reads each datagram whole, so the caller encodes
// datagrams contiguously and sealing writes them once more, encrypted.
type sealedConn struct {
	Conn
	g *Guard
}

// sealBufs holds the sealed datagrams of one Send.
type sealBufs struct {
	arena []byte
	out   [][]byte
}

var sealPool = sync.Pool{New: func() any { return new(sealBufs) }}

// Send seals bufs and sends them. A datagram that cannot be sealed (too
// large with the seal) is counted and not sent; the others are.
func (c *sealedConn) Send(dst []netip.AddrPort, bufs ...[]byte) error {
	g := c.g
	s := g.sealer.Load()
	w := sealPool.Get().(*sealBufs)
	total := 0
	for _, b := range bufs {
		total += len(b) + datagram.SealOverhead
	}
	w.arena = slices.Grow(w.arena[:0], total)
	var firstErr error
	for _, b := range bufs {
		start := len(w.arena)
		a, err := s.Seal(w.arena, b, datagram.Seal{Epoch: g.epoch, Counter: g.counter.Add(1)})
		if err != nil {
			g.sealErrors.Add(1)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		w.arena = a
		w.out = append(w.out, a[start:])
	}
	g.sealed.Add(uint64(len(w.out)))
	err := c.Conn.Send(dst, w.out...)
	clear(w.out)
	w.out = w.out[:0]
	sealPool.Put(w)
	if err == nil {
		err = firstErr
	}
	return err
}
