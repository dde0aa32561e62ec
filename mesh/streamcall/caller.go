package streamcall

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh/frame"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// Caller opens streamed calls to the server on a scope. Its replies arrive
// on a reply scope of its own (<scope>/reply/<random id>/), on which it
// listens from NewCaller on, so that no chunk of a call it opens is sent
// before it listens. A Caller is safe for concurrent use.
type Caller struct {
	sc, callSc, replySc scope.Scope
	gapTimeout          time.Duration
	firstTimeout        time.Duration // <= 0: none
	dropped             func(reason string)
	l                   *client.Listener
	inf                 *client.Informer

	mu     sync.Mutex
	calls  map[string]*Stream
	closed bool
}

// Reasons a Caller drops a chunk, as CallerConfig.Dropped names them.
const (
	// DropMalformed: the event is no STREAM_CHUNK frame with a sid.
	DropMalformed = "malformed_chunk"
	// DropLate: the chunk's call is no longer open (it ended or failed).
	DropLate = "late_chunk"
)

// CallerConfig configures a Caller. The zero value works.
type CallerConfig struct {
	// GapTimeout is how long a gap in a stream may stay open before it
	// is a lost chunk (DefaultGapTimeout).
	GapTimeout time.Duration
	// FirstChunkTimeout bounds the wait for a call's first chunk, so that
	// a call no server takes fails with ErrNoAnswer long before its
	// deadline (DefaultFirstChunkTimeout; negative: no bound but the
	// deadline).
	FirstChunkTimeout time.Duration
	// Dropped, if set, counts a chunk the Caller dropped, by reason
	// (DropMalformed, DropLate); it must be quick and not block.
	Dropped func(reason string)
}

// NewCaller returns a Caller of the server on sc.
func NewCaller(bus *client.Bus, sc scope.Scope, cfg CallerConfig) (*Caller, error) {
	gapTimeout, firstTimeout := cfg.GapTimeout, cfg.FirstChunkTimeout
	if firstTimeout == 0 {
		firstTimeout = DefaultFirstChunkTimeout
	}
	if cfg.Dropped == nil {
		cfg.Dropped = func(string) {}
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	c := &Caller{
		sc: sc, gapTimeout: gapTimeout, firstTimeout: firstTimeout, dropped: cfg.Dropped, calls: make(map[string]*Stream),
		callSc:  sc.Concat(scope.MustParse("/" + callSuffix)),
		replySc: sc.Concat(scope.MustParse("/" + replySuffix + "/" + hex.EncodeToString(id))),
	}
	var err error
	if c.inf, err = bus.NewInformer(c.callSc); err != nil {
		return nil, err
	}
	c.l, err = bus.NewListener(c.replySc, client.WithInlineDelivery())
	if err != nil {
		_ = c.inf.Close()
		return nil, err
	}
	c.l.AddHandler(c.receive)
	return c, nil
}

// ReplyScope returns the scope the Caller's chunks arrive on.
func (c *Caller) ReplyScope() scope.Scope { return c.replySc }

// receive hands a chunk to its stream's queue; a stream whose reader fell
// too far behind fails.
func (c *Caller) receive(ev *client.Event) error {
	f, err := decode(ev.Data, frame.StreamChunk)
	if err != nil {
		c.dropped(DropMalformed)
		return nil
	}
	sid, ch, err := parseChunk(f)
	if err != nil {
		c.dropped(DropMalformed)
		return nil
	}
	c.mu.Lock()
	s := c.calls[sid]
	c.mu.Unlock()
	if s == nil {
		c.dropped(DropLate)
		return nil
	}
	ch.Data = append([]byte(nil), ch.Data...) // the event's memory is the bus's
	s.in.put(arrival{c: ch, at: time.Now()})
	return nil
}

// Call opens a streamed call with req (its Session and ReplyTo are the
// Caller's to set). The call ends at ctx's deadline, or DefaultTimeout from
// now without one; cancelling ctx cancels the call at the server. The
// caller reads the Stream to its end or closes it.
func (c *Caller) Call(ctx context.Context, req Request) (*Stream, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(DefaultTimeout)
	}
	id := make([]byte, sidBytes)
	_, _ = rand.Read(id)
	req.Session, req.ReplyTo, req.Timeout = hex.EncodeToString(id), c.replySc, time.Until(deadline)
	b, err := frame.Marshal(requestFrame(&req))
	if err != nil {
		return nil, err
	}
	s := &Stream{c: c, sid: req.Session, in: newInbox(), deadline: deadline,
		m: NewReceiver(deadline, c.gapTimeout)}
	if first := time.Now().Add(c.firstTimeout); c.firstTimeout > 0 && first.Before(deadline) {
		s.m.ExpectFirstBy(first)
	}
	cctx, closeCall := context.WithCancelCause(ctx)
	var stop context.CancelFunc
	s.ctx, stop = context.WithDeadline(cctx, deadline)
	s.stop = func() { stop(); closeCall(ErrClosed) }
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		s.stop()
		return nil, ErrClosed
	}
	c.calls[s.sid] = s
	c.mu.Unlock()
	if err := c.publish(s.ctx, b); err != nil {
		s.end()
		return nil, fmt.Errorf("streamcall: request: %w", err)
	}
	// The caller's cancellation reaches the server even while no one reads.
	after := context.AfterFunc(ctx, s.cancelRemote)
	s.stopAfter = func() { after() }
	return s, nil
}

// publish sends a frame on the call scope.
func (c *Caller) publish(ctx context.Context, b []byte) error {
	ev := &client.Event{}
	ev.Data, ev.WireSchema = b, notification.SchemaBytes
	return c.inf.PublishEvent(ctx, ev)
}

// forget drops a finished stream.
func (c *Caller) forget(sid string) {
	c.mu.Lock()
	delete(c.calls, sid)
	c.mu.Unlock()
}

// Close ends the Caller: open streams fail with ErrClosed. It is idempotent.
func (c *Caller) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	calls := c.calls
	c.calls = map[string]*Stream{}
	c.mu.Unlock()
	for _, s := range calls {
		s.stop()
	}
	return errors.Join(c.l.Close(), c.inf.Close())
}

// Call opens one streamed call to the server on sc through a Caller of its
// own, closed when the Stream is. A program making many calls keeps a
// Caller instead: each new one listens on a new reply scope.
func Call(ctx context.Context, bus *client.Bus, sc scope.Scope, req Request) (*Stream, error) {
	c, err := NewCaller(bus, sc, CallerConfig{})
	if err != nil {
		return nil, err
	}
	s, err := c.Call(ctx, req)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}
