package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// Callback implements one method of a LocalServer. req.Payload is the
// argument; the result is converted by the Bus's registry (nil means void).
// A result of type *Event is the reply event itself: its Payload (or Data
// under WireSchema), user times and user infos are sent; the server sets
// its scope, method and causes.
// A returned error becomes an error reply carrying err.Error(). ctx ends when
// the server closes.
type Callback func(ctx context.Context, req *Event) (any, error)

// LocalServer offers methods to RemoteServers: requests (method REQUEST) on
// <scope>/<method>/ are handed to the method's Callback, one at a time per
// method in arrival order, and answered with a REPLY event on the same scope
// whose first cause is the request's id. Each method has a queue and a
// goroutine; over the socket protocol a request that finds its method
// idle is served by the connection's reader itself, as a Listener's event
// is (see Listener).
type LocalServer struct {
	bus     *Bus
	info    partInfo
	replier *Informer
	o       options
	ctx     context.Context
	cancel  context.CancelFunc

	mu      sync.Mutex
	methods map[string]*serverMethod
	closed  bool

	untrack   func()
	closeOnce sync.Once
}

// NewLocalServer creates a local server on sc (WithQueue applies to each
// method's request queue).
func (b *Bus) NewLocalServer(sc scope.Scope, opts ...Option) (*LocalServer, error) {
	if sc.IsZero() {
		return nil, fmt.Errorf("%w: zero scope", ErrConfig)
	}
	o := collect(opts)
	if err := o.checkQueue(); err != nil {
		return nil, err
	}
	replier, err := b.newInformer(sc, "", options{})
	if err != nil {
		return nil, err
	}
	s := &LocalServer{
		bus: b, replier: replier, o: o,
		info:    partInfo{kind: KindLocalServer, id: notification.NewParticipantID(), scope: sc},
		methods: make(map[string]*serverMethod),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.untrack, err = b.track(func() { s.close(false) }); err != nil {
		replier.Close()
		return nil, err
	}
	if err := b.announce(context.Background(), s.info); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// ID returns the server's participant id.
func (s *LocalServer) ID() [16]byte { return s.info.id }

// Scope returns the server's scope.
func (s *LocalServer) Scope() scope.Scope { return s.info.scope }

// AddMethod registers fn as method name, which must be one valid scope
// component ([-_a-zA-Z0-9]+), and starts serving it.
func (s *LocalServer) AddMethod(name string, fn Callback) error {
	msc, err := methodScope(s.info.scope, name)
	if err != nil {
		return err
	}
	if fn == nil {
		return fmt.Errorf("%w: nil callback for %s", ErrConfig, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if _, dup := s.methods[name]; dup {
		return fmt.Errorf("%w: method %q already registered", ErrConfig, name)
	}
	m := &serverMethod{srv: s, name: name, scope: msc, fn: fn,
		q: s.bus.newQueue(s.o)}
	s.methods[name] = m
	m.detach = s.bus.link.attach(m)
	m.parts = s.bus.announceMethod(s.info, KindLocalMethod, msc)
	go m.run()
	return nil
}

// methodScope returns <server>/<name>/ after checking name.
func methodScope(server scope.Scope, name string) (scope.Scope, error) {
	sub, err := scope.Parse("/" + name)
	if err != nil || len(sub.Components()) != 1 {
		return scope.Scope{}, fmt.Errorf("%w: method name %q is not one scope component", ErrConfig, name)
	}
	return server.Concat(sub), nil
}

// Close stops serving every method and retires the server. Requests still
// queued get no reply. It is idempotent and may be called from a Callback.
func (s *LocalServer) Close() error {
	s.close(true)
	return nil
}

func (s *LocalServer) close(untrack bool) {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		methods := s.methods
		s.methods = nil
		s.mu.Unlock()
		for _, m := range methods {
			m.detach()
			m.q.close()
			s.bus.retireAll(m.parts)
		}
		s.cancel()
		s.replier.Close()
		if untrack {
			s.untrack()
		}
		s.bus.retire(s.info)
	})
}

// serverMethod is one method of a LocalServer: its request queue and the
// goroutine calling the Callback.
type serverMethod struct {
	srv    *LocalServer
	name   string
	scope  scope.Scope
	fn     Callback
	q      *queue
	detach func()
	// parts are the method's participants introspection announced
	// (announceMethod).
	parts []partInfo
	// turn is held by whoever serves a request: the method's goroutine,
	// or a socket link's reader delivering quickly (quick.go).
	turn quickTurn
}

func (m *serverMethod) sinkScope() scope.Scope { return m.scope }

// wants reports whether it is a request addressed to exactly this method.
func (m *serverMethod) wants(it item) bool {
	return it.ev.Method == MethodRequest && it.ev.Scope == m.scope
}

// deliver queues requests addressed to exactly this method.
func (m *serverMethod) deliver(it item) {
	if m.wants(it) {
		m.q.push(it)
	}
}

// deliverLater is deliver holding the request in p, for the socket link's
// reader, which may serve it itself (quick.go).
func (m *serverMethod) deliverLater(it item, p *pushBatch) {
	if m.wants(it) {
		p.add(m.q, m, it)
	}
}

// run serves queued requests until the server closes. It takes a request
// and serves it holding the method's turn, so that a reader's quick
// delivery never overtakes a request already taken.
func (m *serverMethod) run() {
	var one [1]item
	for {
		if _, err := m.turn.next(m.srv.ctx, m.q, one[:]); err != nil {
			return
		}
		it := one[0]
		one[0] = item{}
		m.serve(it)
		m.turn.mu.Unlock()
	}
}

// serve answers one request.
func (m *serverMethod) serve(it item) {
	req := toEvent(m.srv.bus.reg, nil, it, false)
	result, cerr := m.invoke(req)
	if m.q.isClosed() {
		return
	}
	m.reply(req, result, cerr)
}

func (m *serverMethod) quickTurn() *quickTurn { return &m.turn }

// handleTurn serves a request on the caller's goroutine, which holds the
// method's turn, and gives the turn back.
func (m *serverMethod) handleTurn(it item) {
	defer m.turn.mu.Unlock()
	m.q.pushed.Add(1)
	if !m.q.isClosed() {
		m.serve(it)
	}
}

// invoke calls the Callback, turning a panic into an error.
func (m *serverMethod) invoke(req *Event) (result any, err error) {
	if req.PayloadErr != nil {
		return nil, fmt.Errorf("cannot convert the argument: %w", req.PayloadErr)
	}
	defer func() {
		if p := recover(); p != nil {
			m.srv.bus.log.Error("client: server method panicked", "scope", m.scope.String(), "panic", fmt.Sprint(p))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return m.fn(m.srv.ctx, req)
}

// reply publishes the result or the error of a request.
func (m *serverMethod) reply(req *Event, result any, cerr error) {
	rep := replyEvent(result)
	rep.Scope, rep.Method = m.scope, MethodReply
	rep.Causes = []notification.EventID{req.ID}
	if cerr == nil {
		err := m.srv.replier.PublishEvent(m.srv.ctx, rep)
		if err == nil || errors.Is(err, ErrClosed) || m.srv.ctx.Err() != nil {
			return
		}
		if !errors.Is(err, notification.ErrWrongType) && !errors.Is(err, notification.ErrNoConverter) &&
			!errors.Is(err, notification.ErrInvalidValue) {
			m.srv.bus.log.Warn("client: sending reply failed", "scope", m.scope.String(), "err", err)
			return
		}
		cerr = fmt.Errorf("cannot convert the result: %w", err)
	}
	rep = &Event{}
	rep.Scope, rep.Method = m.scope, MethodReply
	rep.WireSchema = notification.SchemaUTF8String
	rep.Data = []byte(strings.ToValidUTF8(cerr.Error(), "\uFFFD"))
	rep.Causes = []notification.EventID{req.ID}
	rep.MetaData.SetUserInfo(ErrorInfoKey, "1")
	if err := m.srv.replier.PublishEvent(m.srv.ctx, rep); err != nil && m.srv.ctx.Err() == nil {
		m.srv.bus.log.Warn("client: sending error reply failed", "scope", m.scope.String(), "err", err)
	}
}

// replyEvent makes the reply event of a Callback's result: a copy of the
// payload and meta data of an *Event, or an event carrying result.
func replyEvent(result any) *Event {
	e, ok := result.(*Event)
	if !ok || e == nil {
		return &Event{Payload: result}
	}
	rep := &Event{Payload: e.Payload}
	if e.Payload == nil {
		rep.WireSchema, rep.Data = e.WireSchema, e.Data
	}
	rep.MetaData.UserTimes = e.MetaData.UserTimes
	rep.MetaData.UserInfos = e.MetaData.UserInfos
	return rep
}
