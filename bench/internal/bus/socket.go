package bus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/rsbpb/introspection"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
)

// Batching of socket publishes: frames are collected and written with one
// SendMany once this many frames or bytes are pending, or on Flush. RSB
// client libraries buffer their socket writes the same way.
const (
	batchFrames = 128
	batchBytes  = 64 << 10
	// keepArenaMax is the largest batch buffer kept between flushes: a
	// publisher of 1 MiB events reuses its buffer, as a client library's
	// write buffer would, instead of allocating one per event.
	keepArenaMax = 4 << 20
)

// Socket is an RSB socket client of an rsbd daemon, speaking raw frames
// through package rsbsocket. It may hold several connections: publishes go
// out on the first, subscriptions are spread over all of them, each
// announced with an introspection Hello of a listener participant so the
// daemon learns the connection's interest.
type Socket struct {
	conns  []*sockConn
	sender [16]byte
	seq    atomic.Uint32
	nextC  atomic.Uint32
	scopes sync.Map // topic string -> scope.Scope

	mu     sync.Mutex // guards the publish batch
	ev     notification.Event
	arena  []byte
	bodies [][]byte
	ends   []int
}

type sockConn struct {
	c        *sockclient.ClientConn
	mu       sync.RWMutex       // guards handlers
	handlers map[string]Handler // by scope string
	done     chan struct{}
}

// DialSocket opens n connections to the daemon's socket at addr.
func DialSocket(ctx context.Context, addr string, n int) (*Socket, error) {
	s := &Socket{sender: notification.NewParticipantID()}
	for i := 0; i < max(n, 1); i++ {
		c, err := sockclient.Dial(ctx, addr)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		sc := &sockConn{c: c, done: make(chan struct{}), handlers: map[string]Handler{}}
		go sc.readLoop()
		s.conns = append(s.conns, sc)
	}
	return s, nil
}

// readLoop dispatches received frames to the handler of their scope. It
// always drains the connection, so the daemon never queues for it. Handlers
// do not retain payloads (Handler), so every frame is read into the same
// buffer.
func (sc *sockConn) readLoop() {
	defer close(sc.done)
	var body []byte
	for {
		var err error
		body, err = sc.c.RecvInto(body)
		if err != nil {
			return
		}
		f, err := frame.ParseFrame(body)
		if err != nil {
			continue
		}
		sc.mu.RLock()
		fn := sc.handlers[f.Scope.String()]
		sc.mu.RUnlock()
		if fn != nil {
			fn(f.Data)
		}
	}
}

// setHandler registers fn for s (nil removes it), in place: a map of its
// own per registration would make N listeners on one connection cost
// O(N²).
func (sc *sockConn) setHandler(s scope.Scope, fn Handler) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if fn == nil {
		delete(sc.handlers, s.String())
	} else {
		sc.handlers[s.String()] = fn
	}
}

func (s *Socket) scope(topic string) (scope.Scope, error) {
	if v, ok := s.scopes.Load(topic); ok {
		return v.(scope.Scope), nil
	}
	sc, err := scope.Parse(topic)
	if err != nil {
		return scope.Scope{}, err
	}
	s.scopes.Store(topic, sc)
	return sc, nil
}

// Publish appends one event frame to the pending batch, writing the batch
// when it is full.
func (s *Socket) Publish(topic string, payload []byte) error {
	sc, err := s.scope(topic)
	if err != nil {
		return err
	}
	return s.publish(sc, payload)
}

// PublishOn returns a function that publishes on topic, its scope parsed
// once.
func (s *Socket) PublishOn(topic string) (func(payload []byte) error, error) {
	return publisherOn(topic, s.publish)
}

func (s *Socket) publish(sc scope.Scope, payload []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ev = notification.Event{
		Scope:      sc,
		WireSchema: notification.SchemaBytes,
		Data:       payload,
		ID:         notification.EventID{SenderID: s.sender, SequenceNumber: s.seq.Add(1)},
	}
	s.arena = notification.AppendNotification(s.arena, &s.ev)
	s.ends = append(s.ends, len(s.arena))
	if len(s.ends) >= batchFrames || len(s.arena) >= batchBytes {
		return s.flushLocked()
	}
	return nil
}

func (s *Socket) flushLocked() error {
	if len(s.ends) == 0 {
		return nil
	}
	s.bodies = s.bodies[:0]
	start := 0
	for _, end := range s.ends {
		s.bodies = append(s.bodies, s.arena[start:end])
		start = end
	}
	err := s.conns[0].c.SendMany(s.bodies)
	s.arena, s.ends = s.arena[:0], s.ends[:0]
	if cap(s.arena) > keepArenaMax {
		s.arena = nil // do not keep an outsized event's buffer around
	}
	return err
}

// InlineReply reports true: a handler runs on a connection's reader
// goroutine, which holds no lock, and Publish and Flush take the batch
// lock and then the connection's send lock, the same order as every other
// caller. While a handler writes, its connection is not read; the daemon
// queues for it, which a reply per event never fills.
func (s *Socket) InlineReply() bool { return true }

// Flush writes the pending batch.
func (s *Socket) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flushLocked()
}

// Sync writes the pending batch (writes are synchronous).
func (s *Socket) Sync() error { return s.Flush() }

// Subscribe announces a listener on topic (on the next connection in turn)
// and dispatches the events of exactly that scope to fn.
func (s *Socket) Subscribe(topic string, fn Handler) (func(), error) {
	sc, err := s.scope(topic)
	if err != nil {
		return nil, err
	}
	conn := s.conns[int(s.nextC.Add(1)-1)%len(s.conns)]
	id := notification.NewParticipantID()
	conn.setHandler(sc, fn)
	if err := s.announce(conn, id, sc, true); err != nil {
		conn.setHandler(sc, nil)
		return nil, err
	}
	return func() {
		_ = s.announce(conn, id, sc, false)
		conn.setHandler(sc, nil)
	}, nil
}

// announce publishes the Hello (or Bye) of listener participant id on sc.
func (s *Socket) announce(conn *sockConn, id [16]byte, sc scope.Scope, hello bool) error {
	var data []byte
	var err error
	schema := rsbsocket.ByeWireSchema
	if hello {
		schema = rsbsocket.HelloWireSchema
		data, err = proto.MarshalOptions{AllowPartial: true}.Marshal(&introspection.Hello{
			Kind: proto.String("listener"), Id: id[:], Scope: proto.String(sc.String()),
		})
	} else {
		data, err = proto.MarshalOptions{AllowPartial: true}.Marshal(&introspection.Bye{Id: id[:]})
	}
	if err != nil {
		return err
	}
	at, err := scope.Parse(rsbsocket.ParticipantsScope.String() + notification.FormatUUID(id) + "/")
	if err != nil {
		return err
	}
	ev := &notification.Event{
		Scope:      at,
		WireSchema: schema,
		Data:       data,
		ID:         notification.EventID{SenderID: id, SequenceNumber: 0},
	}
	body, err := notification.Marshal(ev)
	if err != nil {
		return err
	}
	if err := conn.c.Send(body); err != nil {
		return fmt.Errorf("announce listener: %w", err)
	}
	return nil
}

// Close closes every connection.
func (s *Socket) Close() error {
	var errs []error
	for _, c := range s.conns {
		if err := c.c.Close(); err != nil && !errors.Is(err, io.EOF) {
			errs = append(errs, err)
		}
		<-c.done
	}
	return errors.Join(errs...)
}
