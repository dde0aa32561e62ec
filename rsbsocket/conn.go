package rsbsocket

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/sockio"
)

// conn is the server side of one client connection. Its goroutine (serve)
// performs the handshake, runs the reader and tears everything down. The
// writing side has no goroutine while the connection is idle: readers
// forwarding to it write on their own goroutine what the socket takes at
// once (flushDirect), and a writer goroutine (writeLoop) runs only while a
// backlog lasts.
type conn struct {
	id         ConnID
	srv        *Server
	nc         net.Conn
	remote     net.Addr
	log        atomic.Pointer[slog.Logger] // built on first use: see logAt
	q          *sendQueue
	match      atomic.Pointer[matcher]
	parts      *participants   // owned by the reader
	raw        syscall.RawConn // for writes that must not block; nil: none
	reason     atomic.Int32    // first DisconnectReason + 1; 0 while none
	routed     bool            // in the Deliver snapshot; guarded by srv.mu
	warnedFull atomic.Bool
	fw         *forwarding         // forward's state, nil until the client publishes; owned by the reader
	timer      *time.Timer         // bounds forward's waits; owned by the reader
	flushing   flushState          // targets to flush before reading on; owned by the reader
	held       []frame.Frame       // introspection frames learnt, not yet handed on; owned by the reader
	direct     sockio.DirectWriter // non-blocking writes; used by the queue's owner
	relayedAt  atomic.Int64        // monoNow of the last relay to it not yet answered; 0: none
	answers    atomic.Int32        // relays answered in a row, up to answersMax; written by its reader
	peer       atomic.Int32        // where its client runs: peerUnknown, peerElsewhere or peerHere
}

// startConn registers a freshly accepted connection and starts serving it.
func (s *Server) startConn(nc net.Conn) {
	if !s.allowed(nc) {
		s.refuseNotAllowed(nc)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = nc.Close()
		return
	}
	if len(s.conns) >= s.cfg.MaxConnections {
		first := !s.refusing
		s.refusing = true
		s.mu.Unlock()
		// Counted before the close, which the client may see at once.
		s.stats.connsRefused.Add(1)
		_ = nc.Close()
		if first {
			s.log.Warn("connection limit reached, refusing connections", "max_connections", s.cfg.MaxConnections, "remote", nc.RemoteAddr().String())
		}
		return
	}
	s.refusing = false
	c := &conn{
		id:     ConnID(s.nextID.Add(1)),
		srv:    s,
		nc:     nc,
		remote: remoteOf(nc),
		q:      newSendQueue(s.cfg.QueueFrames, s.cfg.QueueBytes),
		parts:  newParticipants(s.cfg.MaxParticipants, s.cfg.DefaultInterest == InterestAll),
	}
	if sc, ok := nc.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
	}
	sockio.GrowUnixBuffer(nc)
	c.q.heavy = &s.heavyQueues
	c.q.owned = true // by serve, until the greeting is written
	c.match.Store(newMatcher(c.parts.interest()))
	s.conns[c.id] = c
	s.wg.Add(1)
	s.mu.Unlock()
	s.stats.connsTotal.Add(1)
	s.stats.connsCurrent.Add(1)
	go c.serve()
}

// remoteOf returns nc's peer address; a Unix socket peer is usually
// unnamed, and a missing address is named by its network alone.
func remoteOf(nc net.Conn) net.Addr {
	if a := nc.RemoteAddr(); a != nil {
		return a
	}
	return &net.UnixAddr{Net: "unix"}
}

// serve is the connection's main goroutine and its only exit path.
//
// It owns the send queue from the start (startConn) and routes the
// connection before it writes the greeting, so that a frame for the client
// can never fall between the two: frames queued meanwhile wait behind the
// greeting, and letting go of the queue gets them written.
func (c *conn) serve() {
	defer c.srv.wg.Done()
	c.publish()
	if err := c.handshake(); err != nil {
		c.setReason(classifyWriteError(err))
		c.srv.stats.drop(DropHandshake, 1)
		c.logAt(slog.LevelInfo, "handshake failed", "err", err)
		c.abort(DisconnectWriteError)
		c.letGo()
		c.finish(false, true)
		return
	}
	if !c.letGo() {
		go c.writeLoop(handoff{})
	}
	orderly := c.readLoop()
	c.finish(orderly, true)
}

// handshake writes the 4 zero bytes within HandshakeTimeout.
func (c *conn) handshake() error {
	if err := c.nc.SetWriteDeadline(time.Now().Add(c.srv.cfg.HandshakeTimeout)); err != nil {
		return err
	}
	if err := frame.WriteHandshake(c.nc); err != nil {
		return err
	}
	return c.nc.SetWriteDeadline(time.Time{})
}

// publish announces the connection and makes it a Deliver target.
func (c *conn) publish() {
	s := c.srv
	if s.connObs != nil {
		s.connObs.OnConnect(c.id, c.remote)
	}
	s.mu.Lock()
	if !s.closed {
		c.routed = true
		s.rebuildRoutesLocked()
	}
	s.mu.Unlock()
	c.logAt(slog.LevelDebug, "client connected")
	s.interestChanged()
}

// handOn applies what the held introspection frames taught, flushes the
// forwarded frames and hands the held frames, then f (when not nil), to the
// Handler.
func (c *conn) handOn(f *frame.Frame) {
	if len(c.held) > 0 {
		c.applyInterest()
		c.flushTargets()
	}
	if h := c.srv.handler; h != nil {
		for i := range c.held {
			h.OnFrame(c.id, c.held[i])
		}
		if f != nil {
			h.OnFrame(c.id, *f)
		}
	}
	// Introspection comes in rare runs: a listening connection, idle after
	// its Hello, keeps no list of frames.
	clear(c.held)
	c.held = nil
}

// readFailed classifies a read error; it reports whether it was a clean EOF.
func (c *conn) readFailed(err error) bool {
	s := c.srv
	switch {
	case errors.Is(err, io.EOF):
		c.setReason(DisconnectEOF)
		return true
	case errors.Is(err, frame.ErrFrameTooLarge):
		s.stats.drop(DropFrameTooLarge, 1)
		c.setReason(DisconnectFrameTooLarge)
		c.logAt(slog.LevelWarn, "closing connection: frame too large", "err", err)
	case errors.Is(err, frame.ErrEmptyFrame):
		s.stats.drop(DropMalformed, 1)
		c.setReason(DisconnectMalformed)
		c.logAt(slog.LevelWarn, "closing connection: empty frame")
	default:
		if c.setReason(DisconnectReadError) {
			c.logAt(slog.LevelInfo, "read failed", "err", err)
		}
	}
	return false
}

// learn records what an introspection frame says about the client's
// participants. It reports whether they changed; applyInterest makes the
// change take effect.
func (c *conn) learn(f *frame.Frame) bool {
	switch c.parts.observe(f) {
	case introNone:
		return false
	case introBad:
		c.srv.stats.drop(DropBadIntrospection, 1)
		return false
	case introOverflow:
		c.srv.stats.drop(DropParticipantLimit, 1)
	}
	return true
}

// applyInterest derives the connection's interest from its participants
// and, when it changed, re-indexes the server's routes and reports it.
func (c *conn) applyInterest() {
	in := c.parts.interest()
	if sameInterest(in, c.match.Load().interest) {
		return
	}
	c.match.Store(newMatcher(in))
	c.srv.reindex()
	c.logAt(slog.LevelDebug, "interest changed", "all", in.All, "scopes", len(in.Scopes))
	c.srv.interestChanged()
}

// sameInterest compares two interests.
func sameInterest(a, b Interest) bool {
	if a.All != b.All || len(a.Scopes) != len(b.Scopes) {
		return false
	}
	for i := range a.Scopes {
		if a.Scopes[i] != b.Scopes[i] {
			return false
		}
	}
	return true
}

// enqueue offers a frame to the send queue without waiting; it applies the
// slow-client policy when the queue is full. When the queue had no owner it
// starts a writer.
func (c *conn) enqueue(body []byte) bool {
	res, start := c.q.push(body)
	if start {
		go c.writeLoop(handoff{})
	}
	return c.settle(res)
}

// settle accounts for the outcome of offering a frame to the send queue:
// it counts a dropped one and applies the slow-client policy to a full or
// stalled queue. It reports whether the frame was queued.
func (c *conn) settle(res pushResult) bool {
	s := c.srv
	switch res {
	case pushOK:
		return true
	case pushClosed:
		s.stats.drop(DropClosed, 1)
		return false
	}
	s.stats.drop(DropQueueFull, 1)
	why := "send queue full"
	if res == pushStalled {
		why = "client stalled"
	}
	if s.cfg.SlowClientPolicy == SlowClientDisconnect {
		if c.setReason(DisconnectSlowClient) {
			c.logAt(slog.LevelWarn, "closing connection: "+why)
		}
		c.abort(DisconnectSlowClient)
	} else if !c.warnedFull.Swap(true) {
		c.logAt(slog.LevelWarn, why+", dropping frames for this client")
	}
	return false
}

// unqueued counts frames taken out of the queue unwritten as dropped for
// reason r.
func (c *conn) unqueued(frames int, r DropReason) {
	c.srv.stats.drop(r, frames)
}

// setReason records why the connection ends; only the first reason sticks.
// It reports whether r was the first.
func (c *conn) setReason(r DisconnectReason) bool {
	return c.reason.CompareAndSwap(0, int32(r)+1)
}

// shutdown starts an orderly close: write what is queued, then SHUT_WR; the
// reader ends at the client's EOF.
func (c *conn) shutdown() {
	c.setReason(DisconnectShutdown)
	c.q.close(true)
	if c.q.claimFinal() {
		go c.finalDrain()
	}
}

// abort closes the connection at once, dropping what is queued. Any
// goroutine may call it, any number of times.
func (c *conn) abort(r DisconnectReason) {
	c.setReason(r)
	frames, _ := c.q.close(false)
	c.unqueued(frames, DropClosed)
	_ = c.nc.Close()
}

// finish tears the connection down once reading has ended. After a clean
// EOF the writer first drains the queue and shuts down the sending side.
func (c *conn) finish(orderly, published bool) {
	s := c.srv
	c.stopAnswering()
	s.mu.Lock()
	delete(s.conns, c.id)
	if c.routed {
		c.routed = false
		s.rebuildRoutesLocked()
	}
	s.mu.Unlock()
	if orderly {
		c.q.close(true)
		if c.q.claimFinal() {
			c.finalDrain()
		}
	} else {
		c.abort(DisconnectReadError)
	}
	c.q.waitIdle()
	c.q.detach()
	_ = c.nc.Close()
	reason := DisconnectReason(c.reason.Load() - 1)
	if reason < 0 {
		reason = DisconnectReadError
	}
	s.stats.connsCurrent.Add(-1)
	s.stats.disconnects[reason].Add(1)
	if published {
		if s.connObs != nil {
			s.connObs.OnDisconnect(c.id, reason)
		}
		s.interestChanged()
	}
	c.logAt(slog.LevelDebug, "client disconnected", "reason", reason.String())
}

// classifyWriteError maps a write error to a disconnect reason.
func classifyWriteError(err error) DisconnectReason {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return DisconnectTimeout
	}
	return DisconnectWriteError
}

// logAt logs msg at level with the connection's id and remote address. The
// connection's logger is built on the first message its level lets through,
// so that the many connections that never log hold none.
func (c *conn) logAt(level slog.Level, msg string, args ...any) {
	ctx := context.Background()
	if !c.srv.log.Enabled(ctx, level) {
		return
	}
	l := c.log.Load()
	if l == nil {
		l = c.srv.log.With("conn", uint64(c.id), "remote", c.remote.String())
		if !c.log.CompareAndSwap(nil, l) {
			l = c.log.Load()
		}
	}
	l.Log(ctx, level, msg, args...)
}
