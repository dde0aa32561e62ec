package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// Bridge runs one bridge on a client.Bus: its outbound and inbound routes
// and its dead letters.
type Bridge struct {
	cfg    Config
	bus    *client.Bus
	broker Broker
	m      *Metrics
	log    *slog.Logger

	inf   *client.Informer // inbound events' informer (In.Scope)
	dlInf *client.Informer // dead-letter scope's informer, or nil
	rd    *client.Reader   // outbound events' reader (Out.Scope)

	dlMu     sync.Mutex // serializes dead letters to the broker (both routes)
	dlSender Sender     // dead-letter sender to the broker, made on first use

	state [2]routeState // DirIn, DirOut

	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool
}

// routeState is what Ready and the up gauge know of one direction.
type routeState struct {
	active  bool
	up      atomic.Bool
	lastErr atomic.Pointer[error]
	lastLog atomic.Int64 // unix nanos of the last drop log line
}

// dirIndex returns the state index of a direction.
func dirIndex(dir string) int {
	if dir == DirOut {
		return 1
	}
	return 0
}

// New makes the bridge of cfg on bus: it opens the broker (the Factory
// of cfg.Kind), the informers of the inbound and dead-letter scopes and
// the outbound reader. m may be shared by several bridges; nil makes
// unregistered families. Start runs it.
func New(bus *client.Bus, cfg Config, m *Metrics) (*Bridge, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if m == nil {
		m, _ = NewMetrics(nil)
	}
	broker, err := Open(cfg.Settings)
	if err != nil {
		return nil, err
	}
	b := &Bridge{cfg: cfg, bus: bus, broker: broker, m: m, log: cfg.Log().With("bridge", cfg.Name, "kind", cfg.Kind)}
	if err := b.participants(); err != nil {
		b.release()
		return nil, err
	}
	return b, nil
}

// participants makes the bridge's informers and reader.
func (b *Bridge) participants() error {
	var err error
	if !b.cfg.In.IsZero() {
		b.state[0].active = true
		if b.inf, err = b.bus.NewInformer(scope.MustParse(b.cfg.In.Scope)); err != nil {
			return err
		}
	}
	if sc, _ := b.cfg.deadLetterTarget(); sc != "" {
		if b.dlInf, err = b.bus.NewInformer(scope.MustParse(sc)); err != nil {
			return err
		}
	}
	if !b.cfg.Out.IsZero() {
		b.state[1].active = true
		sc := scope.MustParse(b.cfg.Out.Scope)
		public := func(ev *notification.Event) bool { return sc.IsReserved() || !ev.Scope.IsReserved() }
		b.rd, err = b.bus.NewReader(sc, client.WithFilter(public),
			client.WithQueue(b.cfg.QueueLen, client.DropNewest), client.WithQueueBytes(b.cfg.QueueBytes))
	}
	return err
}

// Name returns the bridge's name.
func (b *Bridge) Name() string { return b.cfg.Name }

// Start runs the bridge's routes until Close.
func (b *Bridge) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	for _, dir := range [...]string{DirIn, DirOut} {
		if b.state[dirIndex(dir)].active {
			b.m.zero(b.cfg.Name, dir)
			b.setUp(dir, false, errors.New("starting"))
		}
	}
	if b.inf != nil {
		b.wg.Go(func() { b.runIn(ctx) })
	}
	if b.rd != nil {
		b.wg.Go(func() { b.runOut(ctx) })
	}
}

// Ready returns nil when every route of the bridge works, else an error
// wrapping ErrDown that names the bridge, the direction and why.
func (b *Bridge) Ready() error {
	var errs []error
	for _, dir := range [...]string{DirIn, DirOut} {
		st := &b.state[dirIndex(dir)]
		if !st.active || st.up.Load() {
			continue
		}
		why := "not started"
		if p := st.lastErr.Load(); p != nil {
			why = (*p).Error()
		}
		errs = append(errs, fmt.Errorf("%w: bridge %s %s: %s", ErrDown, b.cfg.Name, dir, why))
	}
	return errors.Join(errs...)
}

// setUp records whether a direction works, in Ready and the up gauge.
func (b *Bridge) setUp(dir string, up bool, err error) {
	st := &b.state[dirIndex(dir)]
	st.up.Store(up)
	if err != nil {
		st.lastErr.Store(&err)
	}
	v := 0.0
	if up {
		v = 1
	}
	b.m.Up.WithLabelValues(b.cfg.Name, dir).Set(v)
}

// Close stops the routes, waits for them, and releases the broker and the
// participants. It is idempotent.
func (b *Bridge) Close() error {
	if !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	if b.cancel != nil {
		b.cancel()
	}
	if b.rd != nil {
		_ = b.rd.Close() // ends a blocked Read
	}
	b.wg.Wait()
	return b.release()
}

// release closes what New opened.
func (b *Bridge) release() error {
	var errs []error
	for _, inf := range [...]*client.Informer{b.inf, b.dlInf} {
		if inf != nil {
			errs = append(errs, inf.Close())
		}
	}
	if b.rd != nil {
		errs = append(errs, b.rd.Close())
	}
	if b.dlSender != nil {
		errs = append(errs, b.dlSender.Close())
	}
	errs = append(errs, b.broker.Close())
	return errors.Join(errs...)
}

// backoff doubles d up to the configured maximum.
func (b *Bridge) backoff(d time.Duration) time.Duration {
	return min(2*d, b.cfg.MaxBackoff)
}

// sleep waits d or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// logLimited logs a warning unless the direction logged one less than
// LogEvery ago; the counters count what it leaves out.
func (b *Bridge) logLimited(dir, msg string, args ...any) {
	st := &b.state[dirIndex(dir)]
	now := time.Now().UnixNano()
	last := st.lastLog.Load()
	if now-last < int64(LogEvery) || !st.lastLog.CompareAndSwap(last, now) {
		return
	}
	b.log.Warn(msg, append([]any{"direction", dir}, args...)...)
}
