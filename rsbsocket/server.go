package rsbsocket

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/internal/spinpay"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/scope"
)

// ErrServerClosed is returned by Serve and ListenAndServe after Close or
// Shutdown.
var ErrServerClosed = errors.New("rsbsocket: server closed")

// ConnID identifies one client connection of a Server for its lifetime. IDs
// start at 1 and are never reused; 0 names no connection.
type ConnID uint64

// Handler receives every frame clients publish. OnFrame runs on the reading
// goroutine of conn, after the server has already forwarded the frame to the
// other matching connections (waiting, up to Config.StallTimeout, for room
// in their queues); frames of one connection arrive in order.
// OnFrame should return quickly: while it runs, that connection is not read
// (which back-pressures only that client). f.Body may be retained but not
// modified.
type Handler interface {
	OnFrame(conn ConnID, f frame.Frame)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(conn ConnID, f frame.Frame)

// OnFrame calls h.
func (h HandlerFunc) OnFrame(conn ConnID, f frame.Frame) { h(conn, f) }

// ConnObserver is optionally implemented by a Handler that wants to know
// when connections come and go. OnConnect runs once a connection is
// accepted, before it is routed and before the greeting is written;
// OnDisconnect after it was removed, also when its greeting failed. Both
// run on the connection's goroutine and must not call Close or Shutdown.
type ConnObserver interface {
	OnConnect(conn ConnID, remote net.Addr)
	OnDisconnect(conn ConnID, reason DisconnectReason)
}

// InterestObserver is optionally implemented by a Handler that tracks the
// union of the connections' interests (Server.Interest), e.g. to tell peers
// which scopes this host wants. OnInterestChanged may be called concurrently
// from several goroutines and spuriously; it should only note that the
// interest must be re-read.
type InterestObserver interface {
	OnInterestChanged()
}

// Server is the server side of the RSB socket transport: it accepts client
// connections, greets them with the handshake, forwards each frame a client
// publishes to every other connection whose interest matches it (never back
// to its sender) and hands it to the Handler.
//
// RSB clients send no subscriptions; a connection's interest is learnt from
// the introspection Hello and Bye events it publishes (see Interest and
// Config.DefaultInterest). Each connection has a bounded send queue, which
// one goroutine at a time writes to the socket (see the package
// documentation, Who writes a connection's socket).
//
// Frames reach the queues on two paths. Deliver, for frames from elsewhere,
// never waits: a full queue drops the frame. A frame a client publishes is
// forwarded by that client's reader, which waits while a target queue is
// above its high watermark (three quarters of QueueFrames and QueueBytes)
// until the target's writer has made room: a subscriber that reads slower
// than the publisher writes slows the publisher down, through TCP, and
// loses nothing. The wait is bounded by Config.StallTimeout. A target that
// has made no room by then is stalled: the frame is handled by
// SlowClientPolicy (dropped and counted, or the target disconnected), and
// later frames for it are not waited for until its queue has drained to
// half its bounds. So a client that stops reading delays the clients
// publishing to it once by StallTimeout, and delivery to the others by no
// more; the daemon itself never waits for a client.
type Server struct {
	cfg      Config
	handler  Handler
	connObs  ConnObserver
	interObs InterestObserver
	log      *slog.Logger
	stats    counters
	nextID   atomic.Uint64
	interGen atomic.Uint64 // counts interest changes; see InterestGeneration
	// heavyQueues counts the send queues at or above their backlog floor,
	// so that BackloggedWithin looks at the connections only when one is.
	heavyQueues atomic.Int64
	// answering counts the connections that answer relays at once
	// (noteAnswer); polling is set while a reader polls for an answer.
	// See awaitAnswer.
	answering atomic.Int32
	polling   atomic.Bool
	// spinGate decides whether the polls for answers pay.
	spinGate spinpay.Gate
	// large bounds the large bodies being read into memory allocated
	// whole from their headers (frame.ReadFrameRoom).
	large  frame.LargeBudget
	routes atomic.Pointer[[]*conn]    // routed connections (from before their greeting), for Deliver
	index  atomic.Pointer[routeIndex] // routes by interest, rebuilt with routes and on interest changes
	addr   atomic.Pointer[net.Addr]
	done   chan struct{} // closed by Close or Shutdown

	mu        sync.Mutex
	closed    bool
	refusing  bool // connections are being refused for MaxConnections (logged once per episode)
	listeners map[net.Listener]struct{}
	conns     map[ConnID]*conn
	wg        sync.WaitGroup // connection goroutines
}

// NewServer returns a Server with cfg (zero fields take defaults) handing
// published frames to handler, which may be nil. A handler may also
// implement ConnObserver and InterestObserver.
func NewServer(cfg Config, handler Handler) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:       cfg,
		handler:   handler,
		log:       cfg.Logger.With("component", "rsbsocket"),
		done:      make(chan struct{}),
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[ConnID]*conn),
	}
	s.connObs, _ = handler.(ConnObserver)
	s.interObs, _ = handler.(InterestObserver)
	s.routes.Store(new([]*conn))
	s.index.Store(buildIndex(nil))
	return s, nil
}

// ListenAndServe listens on Config.Addr and serves until ctx ends, then
// shuts down in order within Config.ShutdownTimeout. It returns nil after
// an orderly shutdown, ErrServerClosed if Close or Shutdown was called
// elsewhere, or the error that stopped it.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("rsbsocket: listen: %w", err)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err = s.Shutdown(sctx)
	<-errc
	return err
}

// Serve accepts connections on ln until Close or Shutdown (then it returns
// ErrServerClosed) or until ln fails. Serve may run on several listeners.
func (s *Server) Serve(ln net.Listener) error {
	if !s.trackListener(ln) {
		_ = ln.Close()
		return ErrServerClosed
	}
	defer s.untrackListener(ln)
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err == nil {
			backoff = 0
			s.startConn(nc)
			continue
		}
		select {
		case <-s.done:
			return ErrServerClosed
		default:
		}
		if errors.Is(err, net.ErrClosed) {
			return fmt.Errorf("rsbsocket: accept: %w", err)
		}
		// Transient failures such as running out of file descriptors.
		backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
		s.log.Warn("accept failed, retrying", "err", err, "backoff", backoff)
		select {
		case <-time.After(backoff):
		case <-s.done:
			return ErrServerClosed
		}
	}
}

// trackListener registers ln unless the server is closed.
func (s *Server) trackListener(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.listeners[ln] = struct{}{}
	a := ln.Addr()
	s.addr.CompareAndSwap(nil, &a)
	return true
}

// untrackListener forgets ln.
func (s *Server) untrackListener(ln net.Listener) {
	s.mu.Lock()
	delete(s.listeners, ln)
	s.mu.Unlock()
}

// Addr returns the address of the first listener Serve ran on, or nil.
func (s *Server) Addr() net.Addr {
	if a := s.addr.Load(); a != nil {
		return *a
	}
	return nil
}

// beginClose stops accepting and returns the connections; only the first
// call returns ok.
func (s *Server) beginClose() (conns []*conn, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed, ok = true, true
		close(s.done)
		for ln := range s.listeners {
			_ = ln.Close()
		}
	}
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	return conns, ok
}

// Shutdown stops accepting, then ends each connection in order: it writes
// what is queued, shuts down the sending side and waits for the client's
// EOF. When ctx ends first, the remaining connections are closed at once and
// ctx's error returned.
func (s *Server) Shutdown(ctx context.Context) error {
	conns, _ := s.beginClose()
	for _, c := range conns {
		c.shutdown()
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	_ = s.Close()
	<-done
	return ctx.Err()
}

// Close stops accepting, closes every connection at once (queued frames are
// dropped) and waits for the connection goroutines. It is idempotent.
func (s *Server) Close() error {
	conns, _ := s.beginClose()
	for _, c := range conns {
		c.abort(DisconnectShutdown)
	}
	s.wg.Wait()
	return nil
}

// Deliver queues frame (a serialized Notification body on scope sc) to every
// connection whose interest matches sc, except the connection except (0 for
// none), and returns to how many. It is the path of frames from elsewhere
// (the network, embedded participants) and never blocks, so a client can
// never hold up the caller: a full queue drops the frame for that
// connection by Config.SlowClientPolicy and counts it (DropQueueFull).
// Frames clients publish take another path, which waits for a slow
// subscriber up to Config.StallTimeout (see Server). frame is shared by the
// queues and must not be modified afterwards.
func (s *Server) Deliver(frame []byte, sc scope.Scope, except ConnID) int {
	var buf [16]*conn
	targets := s.index.Load().appendTargets(buf[:0], sc)
	n := 0
	for _, c := range targets {
		if c.id != except && c.enqueue(frame) {
			n++
		}
	}
	return n
}

// DeliverBatch collects the connections DeliverTo queued frames to, so
// that Flush writes each of them once for a whole batch of frames, on the
// caller's goroutine when they are few and idle, and remembers the targets
// of the last frame's scope, as a publishing connection's reader does. A
// DeliverBatch belongs to one goroutine at a time; its zero value is ready
// for use.
type DeliverBatch struct {
	f  flushState
	fw forwarding
}

// DeliverTo is Deliver for a batch: the frame is queued to the matching
// connections (never blocking; full queues drop it as Deliver does) and
// written by b.Flush, which the caller must call before it waits for
// anything (at the end of its batch).
func (s *Server) DeliverTo(b *DeliverBatch, frame []byte, sc scope.Scope, except ConnID) int {
	n := 0
	for _, c := range b.fw.route(s.index.Load(), sc) {
		if c.id == except {
			continue
		}
		if c.settle(c.q.pushUnowned(frame)) {
			b.f.add(c, len(frame))
			n++
		}
	}
	if b.f.due() {
		b.Flush()
	}
	return n
}

// Flush writes what DeliverTo queued since the last Flush.
func (b *DeliverBatch) Flush() { b.f.flush() }

// Interest returns the union of the interests of all connections: what this
// server's clients want from elsewhere. With no connection it is empty.
func (s *Server) Interest() Interest {
	var scopes []scope.Scope
	for _, c := range *s.routes.Load() {
		in := c.match.Load().interest
		if in.All {
			return Interest{All: true}
		}
		scopes = append(scopes, in.Scopes...)
	}
	return Interest{Scopes: minimalScopes(scopes)}
}

// ConnInfo describes one connection.
type ConnInfo struct {
	ID          ConnID
	Remote      net.Addr
	Interest    Interest
	QueueFrames int
	QueueBytes  int
	Stalled     bool // made no room within StallTimeout; forwarding does not wait for it
}

// Connections describes the routed connections: each is routed just before
// its greeting is written.
func (s *Server) Connections() []ConnInfo {
	routes := *s.routes.Load()
	out := make([]ConnInfo, 0, len(routes))
	for _, c := range routes {
		frames, bytes, _, stalled := c.q.depth()
		out = append(out, ConnInfo{ID: c.id, Remote: c.remote, Interest: c.match.Load().interest,
			QueueFrames: frames, QueueBytes: bytes, Stalled: stalled})
	}
	return out
}

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() Stats {
	st := s.stats.snapshot()
	st.LargeGrown = s.large.Refused()
	st.SpinSkips = s.spinGate.Skips()
	f, b := s.QueueDepth()
	st.QueueFrames, st.QueueBytes = uint64(f), uint64(b)
	return st
}

// QueueDepth returns the frames and body bytes waiting in all send queues,
// summed over the connections (no counter of its own: one shared by every
// queue cost each forwarded frame two contended atomic updates).
func (s *Server) QueueDepth() (frames, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		f, b, _, _ := c.q.depth()
		frames += f
		bytes += b
	}
	return frames, bytes
}

// rebuildRoutesLocked republishes the Deliver snapshot; s.mu is held.
func (s *Server) rebuildRoutesLocked() {
	routes := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		if c.routed {
			routes = append(routes, c)
		}
	}
	// The index first: a connection listed by Connections is a target.
	s.index.Store(buildIndex(routes))
	s.routes.Store(&routes)
}

// reindex rebuilds the route index after a connection's interest changed.
func (s *Server) reindex() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.index.Store(buildIndex(*s.routes.Load()))
}

// interestChanged counts the change and tells the observer, if any.
func (s *Server) interestChanged() {
	s.interGen.Add(1)
	if s.interObs != nil {
		s.interObs.OnInterestChanged()
	}
}

// InterestGeneration counts the changes of Interest: it moves whenever a
// connection comes, goes or changes its interest, before the
// InterestObserver hears of it. Equal generations mean an unchanged
// Interest.
func (s *Server) InterestGeneration() uint64 { return s.interGen.Load() }

// Backlogged reports whether some connection that is not stalled has its
// send queue at or above the high watermark. The node holds back its
// flow-control acknowledgements meanwhile, so that remote senders slow down
// instead of overflowing the queue (Deliver never waits).
func (s *Server) Backlogged() bool { return s.BackloggedWithin(0) }

// BackloggedWithin is Backlogged for a caller that may still deliver up to
// reserve bytes to a connection after it stops its sources, counted as the
// queue's byte bound counts them (body bytes plus FrameOverhead per frame):
// a connection counts as backlogged once less than reserve is left below
// its byte bound (and at its high watermark at the latest).
func (s *Server) BackloggedWithin(reserve int) bool {
	if s.heavyQueues.Load() == 0 {
		return false // no queue is near any threshold: no need to look
	}
	for _, c := range *s.routes.Load() {
		frames, _, charge, stalled := c.q.depth()
		limit := min(c.q.lim.highBytes, max(c.q.lim.maxBytes-reserve, c.q.lim.maxBytes/4))
		if !stalled && (frames >= c.q.lim.highFrames || charge >= limit) {
			return true
		}
	}
	return false
}

// Wanted reports whether some connection's interest matches sc: whether
// Deliver would queue a frame on sc anywhere.
func (s *Server) Wanted(sc scope.Scope) bool {
	var buf [4]*conn
	targets := s.index.Load().appendTargets(buf[:0], sc)
	return len(targets) > 0
}
