package bus

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// GoClientQueue is the event queue of a GoClient's listeners. nats.go's
// subscriptions in this harness have no pending limit; a Go client
// listener's queue is bounded and drops when full (a drop fails the run as
// a loss), so it is made large enough for the runs' bursts.
const GoClientQueue = 1 << 20

// GoClientQueueBytes is the byte bound of a GoClient's listener queues:
// none in effect, as nats.go's subscriptions here have none (the client's
// default, client.DefaultQueueBytes, would drop in the large runs' bursts).
const GoClientQueueBytes = 1 << 40

// GoClient is an endpoint using rsbd's Go client package over one socket
// connection to a daemon: an Informer per topic publishes, a Listener per
// subscription receives, as a Go program on the bus does. Its listeners
// (WithoutRetention) queue events for a goroutine of their own (the
// default) until SetInline.
type GoClient struct {
	bus    *client.Bus
	inline atomic.Bool

	mu     sync.Mutex
	infs   map[string]*client.Informer // by topic
	subs   map[*client.Listener]bool   // open listeners
	closed uint64                      // events dropped by closed listeners
}

// DialGoClient connects a client.Bus to the daemon at addr ("host:port" or
// "unix:PATH").
func DialGoClient(ctx context.Context, addr string) (*GoClient, error) {
	b, err := client.DialConfig(ctx, addr, client.Config{DisplayName: "rsbd-bench"})
	if err != nil {
		return nil, err
	}
	return &GoClient{bus: b, infs: map[string]*client.Informer{}, subs: map[*client.Listener]bool{}}, nil
}

// informer returns the topic's informer, created on first use.
func (g *GoClient) informer(topic string) (*client.Informer, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if inf := g.infs[topic]; inf != nil {
		return inf, nil
	}
	sc, err := scope.Parse(topic)
	if err != nil {
		return nil, err
	}
	inf, err := g.bus.NewInformer(sc)
	if err != nil {
		return nil, err
	}
	g.infs[topic] = inf
	return inf, nil
}

// Publish publishes payload as a []byte event (wire schema "bytes") through
// the topic's informer.
func (g *GoClient) Publish(topic string, payload []byte) error {
	inf, err := g.informer(topic)
	if err != nil {
		return err
	}
	_, err = inf.Publish(context.Background(), payload)
	return err
}

// PublishOn returns a function publishing through the topic's informer.
func (g *GoClient) PublishOn(topic string) (func(payload []byte) error, error) {
	inf, err := g.informer(topic)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	return func(p []byte) error {
		_, err := inf.Publish(ctx, p)
		return err
	}, nil
}

// Flush does nothing: the Bus's writer goroutine writes queued events as
// soon as a publish queues them.
func (g *GoClient) Flush() error { return nil }

// Sync waits until every event published so far is written to the
// connection.
func (g *GoClient) Sync() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return g.bus.Flush(ctx)
}

// Subscribe creates a listener on topic whose handler passes each event's
// data to fn.
func (g *GoClient) Subscribe(topic string, fn Handler) (func(), error) {
	sc, err := scope.Parse(topic)
	if err != nil {
		return nil, err
	}
	// The harness's handlers keep no payload (in every system), so the
	// listener gives its events back, as the embedded subscriptions are
	// WithoutRetention.
	opts := []client.Option{client.WithQueue(GoClientQueue, client.DropNewest), client.WithQueueBytes(GoClientQueueBytes), client.WithoutRetention()}
	if g.inline.Load() {
		opts = append(opts, client.WithInlineDelivery())
	}
	l, err := g.bus.NewListener(sc, opts...)
	if err != nil {
		return nil, err
	}
	l.AddHandler(func(ev *client.Event) error {
		if ev.Scope == sc && ev.WireSchema == notification.SchemaBytes {
			fn(ev.Data)
		}
		return nil
	})
	g.mu.Lock()
	g.subs[l] = true
	g.mu.Unlock()
	return func() {
		_ = l.Close()
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.subs[l] {
			delete(g.subs, l)
			g.closed += l.Stats().Dropped
		}
	}, nil
}

// Losses counts the events the listeners dropped because their queue was
// full: events the client accepted and lost, which fail a run.
func (g *GoClient) Losses() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.closed
	for l := range g.subs {
		n += l.Stats().Dropped
	}
	return int64(n)
}

// SetInline makes later subscriptions listeners WithInlineDelivery: their
// handlers run on the goroutine reading the connection.
func (g *GoClient) SetInline(on bool) { g.inline.Store(on) }

// InlineReply reports true: a listener's handler may publish on its Bus.
func (g *GoClient) InlineReply() bool { return true }

// Close closes the Bus and its participants.
func (g *GoClient) Close() error { return g.bus.Close() }

// Stats returns the counters of the endpoint's Bus.
func (g *GoClient) Stats() client.BusStats { return g.bus.Stats() }
