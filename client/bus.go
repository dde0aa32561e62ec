package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/node"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// link is how a Bus reaches the bus: the socket protocol or an embedded node.
type link interface {
	// publish sends ev to the bus and to the local sinks whose scope
	// matches. ev is not modified afterwards and may be retained by sinks;
	// its slices (Data, Causes, the meta data's user times and infos) may
	// be the publisher's memory, which a link copies (detach) before it
	// keeps them past the call or hands them to sinks.
	// kept reports whether anything may still refer to ev after the call;
	// an event nothing kept may be reused by the caller.
	publish(ctx context.Context, ev *notification.Event) (kept bool, err error)
	// attach starts delivering the events on s's scope (and sub-scopes) to
	// s; the returned function stops it.
	attach(s sink) (detach func())
	// flush waits until the events published so far have left the
	// process (or ctx is done).
	flush(ctx context.Context) error
	// transportURL names the transport in introspection Hellos.
	transportURL() string
	// close releases the link.
	close() error
}

// sink receives the events of one scope and its sub-scopes.
type sink interface {
	sinkScope() scope.Scope
	// deliver is called on the goroutine receiving from the bus (or the
	// publisher's, for local events) and must not block. it.ev is shared
	// and must not be modified (item).
	deliver(it item)
}

// Bus is a process's connection to the RSB bus, over the socket protocol
// (Dial) or as an embedded node (Embedded). Participants are created from it;
// Close closes them and the connection. A Bus is safe for concurrent use.
type Bus struct {
	cfg   Config
	reg   *notification.Registry
	log   *slog.Logger
	link  link
	owned *node.Node // closed with the Bus (NewEmbedded)
	intro *introspector

	mu     sync.Mutex
	closed bool
	parts  map[uint64]func()
	nextID uint64

	dead     chan struct{}
	deadErr  error
	deadOnce sync.Once

	closeOnce sync.Once
	closeErr  error

	published atomic.Uint64
	received  atomic.Uint64
	malformed atomic.Uint64
	unwanted  atomic.Uint64
	// quick and quickHandOns count quick deliveries (see quick.go) and
	// the readings they handed on.
	quick        atomic.Uint64
	quickHandOns atomic.Uint64
}

// BusStats counts a Bus's traffic.
type BusStats struct {
	// Published counts events this process published.
	Published uint64
	// Received counts frames received from the server (socket mode).
	Received uint64
	// Malformed counts received frames that were not valid Notifications
	// (skipped).
	Malformed uint64
	// Unwanted counts received frames on scopes no local participant
	// listens to (skipped without decoding; socket mode).
	Unwanted uint64
	// Unsent counts events Publish accepted (queued for the connection)
	// that were never written: the connection failed first, or Close gave
	// up waiting for it (socket mode).
	Unsent uint64
	// SurveysDropped counts introspection surveys not answered because
	// surveyQueue of them were already waiting.
	SurveysDropped uint64
	// QuickDeliveries counts events the connection's reader delivered to
	// an idle listener itself, without waking its goroutine (socket mode;
	// see Listener).
	QuickDeliveries uint64
	// QuickHandOns counts the quick deliveries whose handlers waited for a
	// RemoteServer's reply or a Reader's event, or ran past a tick of the
	// guard (10-20 ms), so that another goroutine went on reading
	// meanwhile.
	QuickHandOns uint64
}

// Dial connects to the bus over the RSB socket protocol with the default
// Config. target is a URI ("socket://host:port", "socket:/",
// "socket:/?path=/run/rsbd.sock"), a "host:port" address, "unix:PATH" for
// the daemon's Unix socket, or "" for the local daemon; a scope in the URI is ignored.
func Dial(ctx context.Context, target string) (*Bus, error) {
	return DialConfig(ctx, target, Config{})
}

// DialConfig is Dial with a configuration.
func DialConfig(ctx context.Context, target string, cfg Config) (*Bus, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, err := resolveTarget(target)
	if err != nil {
		return nil, err
	}
	b := newBus(cfg)
	sl, err := dialSocket(ctx, u, cfg.Socket, b)
	if err != nil {
		return nil, err
	}
	b.link = sl
	b.start()
	sl.startReader()
	return b, nil
}

// Embedded returns a Bus whose participants publish and receive through n,
// an rsbd node running in this process, with the default Config. Closing the
// Bus leaves n running.
func Embedded(n *node.Node) *Bus {
	b := newBus(Config{})
	b.link = newEmbeddedLink(n)
	b.start()
	return b
}

// EmbeddedConfig is Embedded with a configuration.
func EmbeddedConfig(n *node.Node, cfg Config) (*Bus, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := newBus(cfg)
	b.link = newEmbeddedLink(n)
	b.start()
	return b, nil
}

// NewEmbedded starts a node with ncfg and returns a Bus on it; closing the
// Bus closes the node.
func NewEmbedded(ncfg node.Config, cfg Config) (*Bus, error) {
	n, err := node.New(ncfg, nil)
	if err != nil {
		return nil, fmt.Errorf("client: embedded node: %w", err)
	}
	b, err := EmbeddedConfig(n, cfg)
	if err != nil {
		n.Close()
		return nil, err
	}
	b.owned = n
	return b, nil
}

func newBus(cfg Config) *Bus {
	cfg = cfg.withDefaults()
	return &Bus{
		cfg:   cfg,
		reg:   cfg.Registry,
		log:   cfg.Logger,
		parts: make(map[uint64]func()),
		dead:  make(chan struct{}),
	}
}

// start brings up introspection once the link exists.
func (b *Bus) start() {
	if !b.cfg.NoIntrospection {
		b.intro = newIntrospector(b)
	}
}

// Registry returns the registry converting this Bus's payloads.
func (b *Bus) Registry() *notification.Registry { return b.reg }

// Stats returns the Bus's counters.
func (b *Bus) Stats() BusStats {
	st := BusStats{Published: b.published.Load(), Received: b.received.Load(), Malformed: b.malformed.Load(),
		Unwanted: b.unwanted.Load(), QuickDeliveries: b.quick.Load(), QuickHandOns: b.quickHandOns.Load()}
	if b.intro != nil {
		st.SurveysDropped = b.intro.droppedSurveys.Load()
	}
	if sl, ok := b.link.(*socketLink); ok {
		st.Unsent = sl.send.unsentFrames()
	}
	return st
}

// Flush waits until every event published on the Bus so far has left the
// process: over the socket protocol, until the events queued for the
// connection are written to it (publishes return once their event is
// queued); an embedded Bus hands each event to its node as it is
// published, so Flush returns at once. It fails with the error that ended
// the connection (ErrDisconnected, ErrClosed), or ctx's.
func (b *Bus) Flush(ctx context.Context) error {
	return b.link.flush(ctx)
}

// Close closes every participant (sending their Byes), then the connection
// (or leaves the cluster, for NewEmbedded). It is idempotent.
func (b *Bus) Close() error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.closed = true
		parts := b.parts
		b.parts = nil
		b.mu.Unlock()
		for _, closeFn := range parts {
			closeFn()
		}
		if b.intro != nil {
			b.intro.close()
		}
		var errs []error
		if b.link != nil {
			errs = append(errs, b.link.close())
		}
		if b.owned != nil {
			errs = append(errs, b.owned.Close())
		}
		b.closeErr = errors.Join(errs...)
	})
	return b.closeErr
}

// track registers a participant's close function for Bus.Close and returns
// the function that forgets it again.
func (b *Bus) track(closeFn func()) (untrack func(), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	if err := b.deadError(); err != nil {
		return nil, err
	}
	b.nextID++
	id := b.nextID
	b.parts[id] = closeFn
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.parts, id)
	}, nil
}

// publish sends a prepared event; kept is the link's (see link.publish).
func (b *Bus) publish(ctx context.Context, ev *notification.Event) (kept bool, err error) {
	if err := b.deadError(); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, ctxError(ctx)
	}
	kept, err = b.link.publish(ctx, ev)
	if err != nil {
		if errors.Is(err, node.ErrClosed) {
			return kept, fmt.Errorf("%w: %w", ErrClosed, err)
		}
		return kept, err
	}
	b.published.Add(1)
	return kept, nil
}

// markDead records that the link failed; blocked Reads return cause.
func (b *Bus) markDead(cause error) {
	b.deadOnce.Do(func() {
		b.deadErr = fmt.Errorf("%w: %w", ErrDisconnected, cause)
		close(b.dead)
	})
}

// deadError returns the link's failure, if any.
func (b *Bus) deadError() error {
	select {
	case <-b.dead:
		return b.deadErr
	default:
		return nil
	}
}

// announce tells introspection about a new participant.
func (b *Bus) announce(ctx context.Context, p partInfo) error {
	if b.intro == nil || (p.scope.IsReserved() && !p.always) {
		return nil
	}
	return b.intro.announce(ctx, p)
}

// retire tells introspection that a participant is gone.
func (b *Bus) retire(p partInfo) {
	if b.intro == nil || (p.scope.IsReserved() && !p.always) {
		return
	}
	b.intro.retire(p)
}

// newQueue makes a participant's queue with the bounds and policy of o,
// the Bus's bounds where o sets none.
func (b *Bus) newQueue(o options) *queue {
	size, bytes := o.queueSize, o.queueBytes
	if size <= 0 {
		size = b.cfg.QueueSize
	}
	if bytes <= 0 {
		bytes = b.cfg.QueueBytes
	}
	return newQueue(size, bytes, o.policy)
}

// embeddedLink publishes and subscribes through an in-process node, which
// delivers to local subscriptions itself.
type embeddedLink struct {
	n *node.Node
	// detach is the detach method of the link's detacher.
	detach func(*notification.Event)
}

// newEmbeddedLink returns the link through n.
func newEmbeddedLink(n *node.Node) *embeddedLink {
	return &embeddedLink{n: n, detach: new(detacher).detach}
}

// publish hands ev to the node, which copies it for the network and keeps
// ev itself only for its embedded subscriptions, detached first.
func (l *embeddedLink) publish(ctx context.Context, ev *notification.Event) (kept bool, err error) {
	return l.n.PublishDetached(ctx, ev, l.detach)
}

func (l *embeddedLink) attach(s sink) func() {
	return l.n.Subscribe(s.sinkScope(), func(ev *notification.Event) { s.deliver(item{ev: ev, recv: nowMicros()}) })
}

func (l *embeddedLink) transportURL() string { return "rsbd://" + l.n.GossipAddr().String() }

func (l *embeddedLink) flush(context.Context) error { return nil }

func (l *embeddedLink) close() error { return nil }
