package meshmessage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/scope"
)

// TextSchema is the RSB wire schema of a message body published without
// a datacontenttype: the body of an EventMeshMessage is a string.
const TextSchema = "utf-8-string"

// ErrClosed: the Server is closed.
var ErrClosed = errors.New("meshmessage: server closed")

// Reasons the Server counts drops, refusals and closed connections by
// (mesh.Counters).
const (
	// DropQueueFull: an event found its client's send queue full.
	DropQueueFull = "queue_full"
	// DropUnmappable: no EventMeshMessage can carry an event.
	DropUnmappable = "unmappable"
	// DropNoResponse: a client did not answer a REQUEST_TO_CLIENT in time.
	DropNoResponse = "no_response"

	// RejectBadMagic .. RejectBadHeader: a Package did not decode; its
	// connection is closed (CloseBadPackage).
	RejectBadMagic   = "bad_magic"
	RejectBadVersion = "bad_version"
	RejectTooLarge   = "too_large"
	RejectTruncated  = "truncated"
	RejectBadLength  = "bad_length"
	RejectBadHeader  = "bad_header"
	// RejectMalformed: a body is not the command's JSON, or its message
	// is no valid event or its topic no scope.
	RejectMalformed = "malformed"
	// RejectBus: the bus refused to publish a message.
	RejectBus = "bus"
	// RejectUnauthorized: no token, or an unknown one, in HELLO, or a
	// command before HELLO while tokens are required.
	RejectUnauthorized = "unauthorized"
	// RejectForbidden: a token used outside its scope prefixes.
	RejectForbidden = "forbidden"
	// RejectClients: a connection past MaxClients.
	RejectClients = "clients"
	// RejectRequests: a request past MaxRequests.
	RejectRequests = "requests"
	// RejectUnknownResponse: a RESPONSE_TO_SERVER answering no request
	// waiting.
	RejectUnknownResponse = "unknown_response"
	// RejectCommand: a command the listener does not serve.
	RejectCommand = "command"

	// CloseGoodbye: the client said CLIENT_GOODBYE.
	CloseGoodbye = "goodbye"
	// CloseHeartbeat: the client was silent past the heartbeat timeout.
	CloseHeartbeat = "heartbeat"
	// CloseBadPackage: the client sent a Package that did not decode.
	CloseBadPackage = "bad_package"
	// CloseSlow: a write to the client took longer than WriteTimeout.
	CloseSlow = "slow"
	// CloseUnauthorized: the client's HELLO had no valid token, or it
	// sent another command first while tokens are required.
	CloseUnauthorized = "unauthorized"
	// CloseShutdown: the Server closed.
	CloseShutdown = "shutdown"
)

// reasons are the Server's reason sets.
var reasons = mesh.Reasons{
	Dropped: []string{DropQueueFull, DropUnmappable, DropNoResponse},
	Rejected: []string{RejectBadMagic, RejectBadVersion, RejectTooLarge, RejectTruncated, RejectBadLength,
		RejectBadHeader, RejectMalformed, RejectBus, RejectUnauthorized, RejectForbidden, RejectClients,
		RejectRequests, RejectUnknownResponse, RejectCommand},
	Closed: []string{CloseGoodbye, CloseHeartbeat, CloseBadPackage, CloseSlow, CloseUnauthorized, CloseShutdown},
}

// Server serves the legacy EventMesh TCP protocol on a bus: each client's
// messages are published on the scope their topic names, and the events
// on the scopes it subscribed to are sent to it; requests either way are
// RSB calls. It is safe for concurrent use.
type Server struct {
	bus    *client.Bus
	cfg    Config
	log    *slog.Logger
	inf    *client.Informer
	st     *mesh.Counters
	tokens atomic.Pointer[mesh.Tokens]
	// ctx ends with Close, and with it every call in flight.
	ctx    context.Context
	cancel context.CancelFunc
	// remotes are the RSB remote servers of the scopes clients call.
	remotes remotes

	mu     sync.Mutex
	closed bool
	lns    map[net.Listener]struct{}
	conns  map[*conn]struct{}
	wg     sync.WaitGroup
}

// New returns a Server publishing and subscribing through bus, which the
// caller keeps and closes after the Server.
func New(bus *client.Bus, cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	inf, err := bus.NewInformer(scope.Root)
	if err != nil {
		return nil, fmt.Errorf("meshmessage: informer: %w", err)
	}
	s := &Server{bus: bus, cfg: cfg, log: cfg.Logger, inf: inf, st: mesh.NewCounters(Protocol, reasons),
		remotes: remotes{bus: bus, m: make(map[string]*client.RemoteServer)},
		lns:     make(map[net.Listener]struct{}), conns: make(map[*conn]struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if err := s.SetTokens(cfg.Tokens); err != nil {
		s.cancel()
		_ = inf.Close()
		return nil, err
	}
	return s, nil
}

// SetTokens replaces the tokens clients must present in HELLO, for the
// clients that say HELLO from then on; an empty list turns the check off.
// Clients already served keep their grant. An invalid list changes
// nothing.
func (s *Server) SetTokens(tokens []mesh.Token) error {
	ts, err := mesh.ParseTokens(tokens)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	s.tokens.Store(ts)
	return nil
}

// Serve accepts clients on ln until ln fails or the Server closes; it
// returns ErrClosed after Close. Serve closes ln. For TLS, ln is a
// tls.Listener: the handshake happens on the client's first read, within
// the heartbeat timeout.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ln.Close()
		return ErrClosed
	}
	s.lns[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.lns, ln)
		s.mu.Unlock()
		_ = ln.Close()
	}()
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrClosed
			}
			return err
		}
		s.start(nc)
	}
}

// start serves a new connection unless the Server is full or closed
// (nil).
func (s *Server) start(nc net.Conn) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.conns) >= s.cfg.MaxClients {
		s.st.Reject(RejectClients)
		_ = nc.Close()
		return nil
	}
	c := newConn(s, nc)
	s.conns[c] = struct{}{}
	s.st.AddConnections(1)
	s.wg.Add(2)
	go c.readLoop()
	go c.writeLoop()
	return c
}

// drop forgets a closed connection.
func (s *Server) drop(c *conn) {
	s.mu.Lock()
	if _, ok := s.conns[c]; ok {
		delete(s.conns, c)
		s.st.AddConnections(-1)
	}
	s.mu.Unlock()
}

// Close stops accepting, says SERVER_GOODBYE to every client, closes
// their connections, ends the calls in flight and waits for the
// goroutines. It is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for ln := range s.lns {
		_ = ln.Close()
	}
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	// Each goodbye may wait up to WriteTimeout for a client that does not
	// read; saying them all at once bounds Close by one such wait.
	var bye sync.WaitGroup
	for _, c := range conns {
		bye.Go(c.goodbye)
	}
	bye.Wait()
	s.cancel()
	s.wg.Wait()
	s.remotes.close()
	return s.inf.Close()
}

// Counters returns the Server's counters in the shape every gateway
// listener shares, for the daemon's rsbd_gateway_* metrics.
func (s *Server) Counters() *mesh.Counters { return s.st }

// Stats returns a snapshot of the Server's counters.
func (s *Server) Stats() mesh.Stats { return s.st.Stats() }

// publish publishes the message a Package carries on its topic's scope,
// if the client's grant allows it.
func (s *Server) publish(ctx context.Context, p *Package, gr *mesh.Grant) error {
	f, err := PackageFrame(p)
	if err != nil {
		return err
	}
	ev, err := f.RSB()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadMessage, err)
	}
	if !gr.MayPublish(ev.Scope) {
		return fmt.Errorf("%w: %s", ErrForbidden, ev.Scope)
	}
	switch {
	case len(ev.Data) == 0 && ev.WireSchema == "":
		ev.Data = nil // a void event
	case ev.WireSchema == "":
		ev.WireSchema = TextSchema // an EventMeshMessage body is text
	}
	if err := s.inf.PublishEvent(ctx, &client.Event{Event: *ev}); err != nil {
		return fmt.Errorf("%w: %w", errBus, err)
	}
	return nil
}
