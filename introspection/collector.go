package introspection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/rsbsocket"
)

// ErrConfig is wrapped by the errors of Config.Validate.
var ErrConfig = errors.New("introspection: invalid config")

// Config configures a Collector. The zero value works.
type Config struct {
	// ResponseTimeout bounds each echo call (default
	// DefaultResponseTimeout).
	ResponseTimeout time.Duration
	// PingInterval is the pause between two rounds of echo calls
	// (default DefaultPingInterval).
	PingInterval time.Duration
	// SurveyInterval is the pause between two surveys (default
	// DefaultSurveyInterval): a Hello published before its process's
	// daemon knew of this Collector is lost, and the next survey brings
	// the participant back.
	SurveyInterval time.Duration
	// Logger receives debug messages (default: discarded).
	Logger *slog.Logger
}

// DefaultConfig returns the configuration the zero Config stands for.
func DefaultConfig() Config {
	return Config{ResponseTimeout: DefaultResponseTimeout, PingInterval: DefaultPingInterval,
		SurveyInterval: DefaultSurveyInterval, Logger: slog.New(slog.DiscardHandler)}
}

// Validate reports negative durations.
func (c Config) Validate() error {
	if c.ResponseTimeout < 0 || c.PingInterval < 0 || c.SurveyInterval < 0 {
		return fmt.Errorf("%w: negative duration", ErrConfig)
	}
	return nil
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.ResponseTimeout == 0 {
		c.ResponseTimeout = d.ResponseTimeout
	}
	if c.PingInterval == 0 {
		c.PingInterval = d.PingInterval
	}
	if c.SurveyInterval == 0 {
		c.SurveyInterval = d.SurveyInterval
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	return c
}

// Collector gathers introspection on a Bus into a DB: it listens to Hellos
// and Byes, surveys the participants, and calls every process's echo
// method each PingInterval.
type Collector struct {
	bus      *client.Bus
	cfg      Config
	listener *client.Listener
	surveyor *client.Informer

	mu      sync.Mutex
	db      *DB
	recent  []Change
	servers map[ProcessRef]*client.RemoteServer
	pinging map[ProcessRef]bool

	changed chan struct{}
	kick    chan struct{} // a process was added: ping now
	stop    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
}

// NewCollector starts collecting on bus and sends a first survey.
func NewCollector(bus *client.Bus, cfg Config) (*Collector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Collector{bus: bus, cfg: cfg.withDefaults(), db: NewDB(),
		servers: make(map[ProcessRef]*client.RemoteServer), pinging: make(map[ProcessRef]bool),
		changed: make(chan struct{}, 1), kick: make(chan struct{}, 1), stop: make(chan struct{})}
	var err error
	c.listener, err = bus.NewListener(rsbsocket.ParticipantsScope, client.WithReservedAnnouncement(),
		client.WithQueue(listenerQueue, client.DropOldest))
	if err != nil {
		return nil, fmt.Errorf("introspection: listener: %w", err)
	}
	c.listener.AddHandler(c.handle)
	if c.surveyor, err = bus.NewInformer(rsbsocket.ParticipantsScope); err != nil {
		c.listener.Close()
		return nil, fmt.Errorf("introspection: informer: %w", err)
	}
	c.wg.Add(1)
	go c.pingLoop()
	if err := c.Survey(context.Background()); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Survey asks every process to announce its participants again.
func (c *Collector) Survey(ctx context.Context) error {
	ev := &client.Event{}
	ev.Method = client.MethodSurvey
	if err := c.surveyor.PublishEvent(ctx, ev); err != nil {
		return fmt.Errorf("introspection: survey: %w", err)
	}
	return nil
}

// handle feeds a Hello or Bye to the DB.
func (c *Collector) handle(ev *client.Event) error {
	var changes []Change
	var err error
	now := time.Now()
	c.mu.Lock()
	switch ev.WireSchema {
	case rsbsocket.HelloWireSchema:
		changes, err = c.db.Hello(ev.Data, now)
	case rsbsocket.ByeWireSchema:
		changes, err = c.db.Bye(ev.Data, now)
	}
	c.record(changes)
	c.mu.Unlock()
	if err != nil {
		c.cfg.Logger.Debug("introspection: event not used", "scope", ev.Scope.String(), "err", err)
	}
	return nil
}

// record keeps changes for Changes and signals them; c.mu is held.
func (c *Collector) record(changes []Change) {
	if len(changes) == 0 {
		return
	}
	for _, ch := range changes {
		if ch.Kind == ProcessAdded {
			signal(c.kick)
		}
		if ch.Kind == ProcessRemoved {
			if rs := c.servers[ch.Process]; rs != nil {
				rs.Close()
				delete(c.servers, ch.Process)
			}
		}
	}
	c.recent = append(c.recent, changes...)
	if over := len(c.recent) - maxRecentChanges; over > 0 {
		c.recent = append(c.recent[:0], c.recent[over:]...)
	}
	signal(c.changed)
}

// signal sends on a 1-buffered channel unless a signal is pending.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Changed is signalled (coalesced) whenever the DB changes.
func (c *Collector) Changed() <-chan struct{} { return c.changed }

// Changes returns and forgets the changes recorded since the last call
// (at most the last maxRecentChanges).
func (c *Collector) Changes() []Change {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.recent
	c.recent = nil
	return out
}

// Snapshot returns what the Collector knows now.
func (c *Collector) Snapshot() Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.db.Snapshot()
}

// Stats returns the counters of the Collector's DB.
func (c *Collector) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.db.Stats()
}

// PingAll calls the echo method of every known process now, waiting for
// the answers or timeouts.
func (c *Collector) PingAll(ctx context.Context) {
	c.mu.Lock()
	refs := c.db.Processes()
	c.mu.Unlock()
	sem := make(chan struct{}, maxConcurrentPings)
	var wg sync.WaitGroup
	for _, ref := range refs {
		if !c.claim(ref) {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c.ping(ctx, ref)
		})
	}
	wg.Wait()
}

// claim marks ref as being pinged, false if it already is.
func (c *Collector) claim(ref ProcessRef) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pinging[ref] {
		return false
	}
	c.pinging[ref] = true
	return true
}

// pingLoop pings every process each PingInterval, and surveys each
// SurveyInterval, until Close.
func (c *Collector) pingLoop() {
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-c.stop
		cancel()
	}()
	t := time.NewTicker(c.cfg.PingInterval)
	defer t.Stop()
	survey := time.NewTicker(c.cfg.SurveyInterval)
	defer survey.Stop()
	for {
		c.PingAll(ctx)
		select {
		case <-c.stop:
			return
		case <-t.C:
		case <-c.kick:
		case <-survey.C:
			if err := c.Survey(ctx); err != nil {
				c.cfg.Logger.Debug("introspection: survey failed", "err", err)
			}
		}
	}
}

// ping calls the echo method of one process and records the outcome.
func (c *Collector) ping(ctx context.Context, ref ProcessRef) {
	defer func() {
		c.mu.Lock()
		delete(c.pinging, ref)
		c.mu.Unlock()
	}()
	rs, err := c.server(ref)
	if err != nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, c.cfg.ResponseTimeout)
	defer cancel()
	rep, err := rs.CallEvent(cctx, client.EchoMethod, nil)
	if ctx.Err() != nil {
		return
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.record(c.db.NoReply(ref, now))
		return
	}
	c.record(c.db.Echo(ref, sampleOf(rep), now))
}

// sampleOf reads the four times of an echo reply.
func sampleOf(rep *client.Event) Sample {
	t0, _ := rep.MetaData.UserTime(client.UserTimeRequestSend)
	t1, _ := rep.MetaData.UserTime(client.UserTimeRequestReceive)
	return Sample{RequestSend: int64(min(t0, 1<<62)), RequestReceive: int64(min(t1, 1<<62)),
		ReplySend: rep.MetaData.SendTime, ReplyReceive: rep.MetaData.ReceiveTime}
}

// server returns the RemoteServer of ref's echo server.
func (c *Collector) server(ref ProcessRef) (*client.RemoteServer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rs := c.servers[ref]; rs != nil {
		return rs, nil
	}
	sc, err := client.IntrospectionProcessScope(ref.HostID, ref.PID)
	if err != nil {
		return nil, err
	}
	rs, err := c.bus.NewRemoteServer(sc)
	if err != nil {
		return nil, err
	}
	c.servers[ref] = rs
	return rs, nil
}

// Close stops collecting. It is idempotent.
func (c *Collector) Close() error {
	c.once.Do(func() {
		close(c.stop)
		c.wg.Wait()
		c.listener.Close()
		c.surveyor.Close()
		c.mu.Lock()
		for _, rs := range c.servers {
			rs.Close()
		}
		clear(c.servers)
		c.mu.Unlock()
	})
	return nil
}

// formatID is the short participant id the tree prints: the UUID's first
// eight hex digits.
func formatID(id string) string {
	if len(id) >= 8 {
		return id[:8]
	}
	return id
}
