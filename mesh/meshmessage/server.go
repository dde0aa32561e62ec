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
	"github.com/rsbd/rsbd/scope"
)

// TextSchema is the RSB wire schema of a message body published without
// a datacontenttype: the body of an EventMeshMessage is a string.
const TextSchema = "utf-8-string"

// ErrClosed: the Server is closed.
var ErrClosed = errors.New("meshmessage: server closed")

// Stats are a Server's counters since New.
type Stats struct {
	// Clients is the number of clients connected now.
	Clients int64
	// Refused counts connections refused past MaxClients.
	Refused uint64
	// Published counts messages published on the bus.
	Published uint64
	// Rejected counts messages not published: not mappable to an event.
	Rejected uint64
	// Delivered counts events queued to clients.
	Delivered uint64
	// Dropped counts events not queued: the client's queue was full.
	Dropped uint64
	// Unmappable counts events no EventMeshMessage can carry.
	Unmappable uint64
	// BadPackages counts connections closed for a Package that did not
	// decode.
	BadPackages uint64
	// TimedOut counts clients closed for missing heartbeats.
	TimedOut uint64
}

// counters are the live Stats.
type counters struct {
	clients                                    atomic.Int64
	refused, published, rejected, delivered    atomic.Uint64
	dropped, unmappable, badPackages, timedOut atomic.Uint64
}

// Server serves the legacy EventMesh TCP protocol on a bus: each client's
// messages are published on the scope their topic names, and the events
// on the scopes it subscribed to are sent to it. It is safe for
// concurrent use.
type Server struct {
	bus *client.Bus
	cfg Config
	log *slog.Logger
	inf *client.Informer
	st  counters

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
	return &Server{bus: bus, cfg: cfg, log: cfg.Logger, inf: inf,
		lns: make(map[net.Listener]struct{}), conns: make(map[*conn]struct{})}, nil
}

// Serve accepts clients on ln until ln fails or the Server closes; it
// returns ErrClosed after Close. Serve closes ln.
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

// start serves a new connection unless the Server is full or closed.
func (s *Server) start(nc net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.conns) >= s.cfg.MaxClients {
		s.st.refused.Add(1)
		_ = nc.Close()
		return
	}
	c := newConn(s, nc)
	s.conns[c] = struct{}{}
	s.st.clients.Add(1)
	s.wg.Add(2)
	go c.readLoop()
	go c.writeLoop()
}

// drop forgets a closed connection.
func (s *Server) drop(c *conn) {
	s.mu.Lock()
	if _, ok := s.conns[c]; ok {
		delete(s.conns, c)
		s.st.clients.Add(-1)
	}
	s.mu.Unlock()
}

// Close stops accepting, says SERVER_GOODBYE to every client, closes
// their connections and waits for their goroutines.
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
	for _, c := range conns {
		c.goodbye()
	}
	s.wg.Wait()
	return s.inf.Close()
}

// Stats returns the Server's counters.
func (s *Server) Stats() Stats {
	return Stats{
		Clients: s.st.clients.Load(), Refused: s.st.refused.Load(),
		Published: s.st.published.Load(), Rejected: s.st.rejected.Load(),
		Delivered: s.st.delivered.Load(), Dropped: s.st.dropped.Load(),
		Unmappable: s.st.unmappable.Load(), BadPackages: s.st.badPackages.Load(),
		TimedOut: s.st.timedOut.Load(),
	}
}

// publish publishes the message a Package carries on its topic's scope.
func (s *Server) publish(ctx context.Context, p *Package) error {
	f, err := PackageFrame(p)
	if err != nil {
		return err
	}
	ev, err := f.RSB()
	if err != nil {
		return err
	}
	switch {
	case len(ev.Data) == 0 && ev.WireSchema == "":
		ev.Data = nil // a void event
	case ev.WireSchema == "":
		ev.WireSchema = TextSchema // an EventMeshMessage body is text
	}
	return s.inf.PublishEvent(ctx, &client.Event{Event: *ev})
}
