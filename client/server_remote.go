package client

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// RemoteServer calls the methods of the LocalServers on its scope. Call
// sends a REQUEST on <scope>/<method>/ and returns the first REPLY whose
// causes name the request; later replies (from other servers) are ignored.
// A RemoteServer is safe for concurrent use.
type RemoteServer struct {
	bus       *Bus
	info      partInfo
	requester *Informer
	timeout   time.Duration

	mu      sync.Mutex
	pending map[notification.EventID]chan *notification.Event
	closed  bool
	// methods are the participants introspection announced for each
	// method called so far (announceMethod).
	methods map[string][]partInfo

	life lifecycle
}

// NewRemoteServer creates a remote server on sc (WithCallTimeout applies).
// It is announced before NewRemoteServer returns.
func (b *Bus) NewRemoteServer(sc scope.Scope, opts ...Option) (*RemoteServer, error) {
	o := collect(opts)
	if sc.IsZero() {
		return nil, fmt.Errorf("%w: zero scope", ErrConfig)
	}
	if o.callTimeout < 0 {
		return nil, fmt.Errorf("%w: negative call timeout", ErrConfig)
	}
	if o.callTimeout == 0 {
		o.callTimeout = DefaultCallTimeout
	}
	requester, err := b.newInformer(sc, "", options{})
	if err != nil {
		return nil, err
	}
	r := &RemoteServer{
		bus: b, requester: requester, timeout: o.callTimeout,
		info:    partInfo{kind: KindRemoteServer, id: notification.NewParticipantID(), scope: sc},
		pending: make(map[notification.EventID]chan *notification.Event),
		methods: make(map[string][]partInfo),
	}
	if err := r.life.open(b, r, r.stop); err != nil {
		requester.Close()
		return nil, err
	}
	return r, nil
}

// ID returns the remote server's participant id.
func (r *RemoteServer) ID() [16]byte { return r.info.id }

// Scope returns the remote server's scope.
func (r *RemoteServer) Scope() scope.Scope { return r.info.scope }

func (r *RemoteServer) sinkScope() scope.Scope { return r.info.scope }

func (r *RemoteServer) participant() partInfo { return r.info }

// deliver hands a reply to the call it answers, if that call still waits.
func (r *RemoteServer) deliver(it item) {
	ev := it.ev
	if ev.Method != MethodReply {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range ev.Causes {
		if ch, ok := r.pending[c]; ok {
			delete(r.pending, c)
			ch <- ev // buffered for exactly this one reply
			return
		}
	}
}

// Call calls method with arg (nil for no argument) and returns the result's
// payload. See CallEvent.
func (r *RemoteServer) Call(ctx context.Context, method string, arg any) (any, error) {
	rep, err := r.CallEvent(ctx, method, arg)
	if err != nil {
		return nil, err
	}
	if rep.PayloadErr != nil {
		return nil, fmt.Errorf("client: call %s: %w", method, rep.PayloadErr)
	}
	return rep.Payload, nil
}

// CallEvent calls method with arg and returns the first reply. An error reply
// gives a *RemoteError (errors.Is(err, ErrRemote)); no reply before ctx's
// deadline (or the call timeout, when ctx has none) gives an error wrapping
// ErrTimeout.
func (r *RemoteServer) CallEvent(ctx context.Context, method string, arg any) (*Event, error) {
	msc, err := methodScope(r.info.scope, method)
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	r.ensureMethod(method, msc)
	req := &Event{Payload: arg}
	req.Scope, req.Method = msc, MethodRequest
	ne, err := r.requester.prepare(req)
	if err != nil {
		return nil, err
	}
	ch, err := r.expect(ne.ID)
	if err != nil {
		return nil, err
	}
	defer r.forget(ne.ID)
	if err := r.requester.transmit(ctx, req, ne); err != nil {
		return nil, fmt.Errorf("client: call %s: %w", msc, err)
	}
	return r.await(ctx, msc, method, ch)
}

// await waits for the reply on ch and interprets it.
func (r *RemoteServer) await(ctx context.Context, msc scope.Scope, method string, ch chan *notification.Event) (*Event, error) {
	ev, err := r.reply(ctx, msc, ch)
	if err != nil {
		return nil, err
	}
	rep := toEvent(r.bus.reg, nil, item{ev: ev, recv: nowMicros()}, false)
	if _, isErr := rep.MetaData.UserInfo(ErrorInfoKey); isErr {
		return nil, &RemoteError{Scope: msc.String(), Method: method, Message: string(rep.Data)}
	}
	return rep, nil
}

// reply waits for the reply on ch. A call made by a handler the
// connection's reader runs itself hands the reading on before it waits,
// since the reply comes through the reader.
func (r *RemoteServer) reply(ctx context.Context, msc scope.Scope, ch chan *notification.Event) (*notification.Event, error) {
	select {
	case ev := <-ch:
		return ev, nil
	default:
		r.bus.handOnReading()
	}
	select {
	case ev := <-ch:
		return ev, nil
	case <-r.life.done():
		return nil, ErrClosed
	case <-r.bus.dead:
		return nil, r.bus.deadError()
	case <-ctx.Done():
		return nil, fmt.Errorf("client: call %s: no reply: %w", msc, ctxError(ctx))
	}
}

// expect registers a pending call.
func (r *RemoteServer) expect(id notification.EventID) (chan *notification.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	if len(r.pending) >= maxPendingCalls {
		return nil, ErrTooManyCalls
	}
	ch := make(chan *notification.Event, 1)
	r.pending[id] = ch
	return ch, nil
}

// forget drops a pending call (answered or abandoned).
func (r *RemoteServer) forget(id notification.EventID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pending, id)
}

// stop ends every pending call with ErrClosed.
func (r *RemoteServer) stop() {
	r.mu.Lock()
	r.closed = true
	clear(r.pending)
	methods := r.methods
	r.methods = nil
	r.mu.Unlock()
	r.requester.Close()
	for _, parts := range methods {
		r.bus.retireAll(parts)
	}
}

// ensureMethod announces the participants of a method on its first call,
// as RSB's remote servers create a method participant then.
func (r *RemoteServer) ensureMethod(name string, msc scope.Scope) {
	r.mu.Lock()
	_, known := r.methods[name]
	if known || r.closed || len(r.methods) >= maxAnnouncedMethods {
		r.mu.Unlock()
		return
	}
	r.methods[name] = nil
	r.mu.Unlock()
	parts := r.bus.announceMethod(r.info, KindRemoteMethod, msc)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.bus.retireAll(parts)
		return
	}
	r.methods[name] = parts
	r.mu.Unlock()
}

// Close retires the remote server; waiting calls fail with ErrClosed. It is
// idempotent.
func (r *RemoteServer) Close() error {
	r.life.close()
	return nil
}
