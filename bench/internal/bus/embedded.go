package bus

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/internal/gcfloor"
	"github.com/rsbd/rsbd/node"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// NodeConfig is what the benchmark varies of an rsbd node.
type NodeConfig struct {
	// PoolBase and PoolPort make the multicast pool private to one run.
	PoolBase string `json:"pool_base"`
	PoolPort uint16 `json:"pool_port"`
	// Socket enables the RSB socket server on 127.0.0.1 (ephemeral port).
	Socket bool `json:"socket"`
	// SocketPath, if set, also serves the socket protocol on this Unix
	// socket.
	SocketPath string `json:"socket_path,omitempty"`
	// Join lists gossip addresses of nodes to join.
	Join []string `json:"join,omitempty"`
	// MaxParticipants, if positive, raises the socket server's bound on
	// the listener participants tracked per connection.
	MaxParticipants int `json:"max_participants,omitempty"`
	// SpinWait, if set, replaces the node's default UDP reader poll for
	// an answer (transport.Config.SpinWait; negative: never poll).
	SpinWait time.Duration `json:"spin_wait,omitempty"`
}

// Embedded is an rsbd node used in-process: Publish and Subscribe call
// node.Node directly.
type Embedded struct {
	n      *node.Node
	sender [16]byte
	seq    atomic.Uint32
	losses atomic.Int64
	scopes sync.Map // topic string -> scope.Scope
	ctx    context.Context
	gcStop func() // ends the heap floor of a daemon; nil otherwise
}

// NewEmbedded starts an rsbd node on loopback: memberlist's local profile,
// gossip and data on 127.0.0.1 with ephemeral ports, multicast on lo.
func NewEmbedded(c NodeConfig) (*Embedded, error) {
	gc := group.DefaultConfig()
	if c.PoolBase != "" {
		base, err := netip.ParseAddr(c.PoolBase)
		if err != nil {
			return nil, fmt.Errorf("pool base: %w", err)
		}
		gc.PoolBase = base
	}
	if c.PoolPort != 0 {
		gc.PoolPort = c.PoolPort
	}
	e := &Embedded{sender: notification.NewParticipantID(), ctx: context.Background()}
	cfg := node.Config{
		SocketAddr:   "off",
		GossipAddr:   "127.0.0.1:0",
		DataAddr:     "127.0.0.1:0",
		LocalProfile: true,
		Group:        gc,
		Join:         c.Join,
		OnLoss:       func(l node.LossReport) { e.losses.Add(int64(l.Range.Len())) },
		Logger:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if c.Socket {
		// A daemon: it runs with rsbd's heap floor, as cmd/rsbd does.
		cfg.SocketAddr = "127.0.0.1:0"
		stop, err := gcfloor.Start(gcfloor.DefaultConfig())
		if err != nil {
			return nil, err
		}
		e.gcStop = stop
	}
	cfg.SocketPath = c.SocketPath
	cfg.Transport.SpinWait = c.SpinWait
	cfg.Socket.MaxParticipants = c.MaxParticipants
	n, err := node.New(cfg, nil)
	if err != nil {
		if e.gcStop != nil {
			e.gcStop()
		}
		return nil, err
	}
	e.n = n
	return e, nil
}

// Node returns the underlying node.
func (e *Embedded) Node() *node.Node { return e.n }

func (e *Embedded) scope(topic string) (scope.Scope, error) {
	if v, ok := e.scopes.Load(topic); ok {
		return v.(scope.Scope), nil
	}
	sc, err := scope.Parse(topic)
	if err != nil {
		return scope.Scope{}, err
	}
	e.scopes.Store(topic, sc)
	return sc, nil
}

// Publish publishes one event with the payload as its data (wire schema
// "bytes"), a fixed participant id and increasing sequence numbers. The
// node copies the event for the network and for socket clients; its own
// subscriptions would get payload itself, but no benchmark process
// subscribes to a topic it publishes, so payload may be reused once
// Publish returns, as Endpoint requires (a pong republishes a ping's
// borrowed payload the same way).
func (e *Embedded) Publish(topic string, payload []byte) error {
	sc, err := e.scope(topic)
	if err != nil {
		return err
	}
	return e.publish(sc, payload)
}

// PublishOn returns a function that publishes on topic, its scope parsed
// once.
func (e *Embedded) PublishOn(topic string) (func(payload []byte) error, error) {
	return publisherOn(topic, e.publish)
}

func (e *Embedded) publish(sc scope.Scope, payload []byte) error {
	ev := &notification.Event{
		Scope:      sc,
		WireSchema: notification.SchemaBytes,
		Data:       payload,
		ID:         notification.EventID{SenderID: e.sender, SequenceNumber: e.seq.Add(1)},
	}
	return e.n.Publish(e.ctx, ev)
}

// Flush does nothing: Publish hands each event to the node's engine.
func (e *Embedded) Flush() error { return nil }

// Sync does nothing: the engine sends what it was handed without delay.
func (e *Embedded) Sync() error { return nil }

// Subscribe registers an embedded subscription on topic.
func (e *Embedded) Subscribe(topic string, fn Handler) (func(), error) {
	sc, err := e.scope(topic)
	if err != nil {
		return nil, err
	}
	// Handlers keep no payload (Handler), so events may stay in the
	// node's receive buffers.
	return e.n.Subscribe(sc, func(ev *notification.Event) { fn(ev.Data) }, node.WithoutRetention()), nil
}

// InlineReply reports true: a node's handler may publish (the event is
// queued to the engine when the handler runs on the engine's goroutine;
// one reply per event never fills the queue).
func (e *Embedded) InlineReply() bool { return true }

// Losses returns the datagrams the node reported lost.
func (e *Embedded) Losses() int64 { return e.losses.Load() }

// Close closes the node.
func (e *Embedded) Close() error {
	err := e.n.Close()
	if e.gcStop != nil {
		e.gcStop()
	}
	return err
}
