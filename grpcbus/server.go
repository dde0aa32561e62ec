package grpcbus

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// Server serves gRPC services on the bus. It implements
// grpc.ServiceRegistrar, so generated RegisterFooServer functions take it
// as they take a *grpc.Server. Register services, then Start; Stop ends
// every call.
type Server struct {
	bus      *client.Bus
	o        options
	met      *metrics
	ep       *endpoint
	unaryInt grpc.UnaryServerInterceptor
	ctx      context.Context
	cancel   context.CancelFunc

	mu        sync.Mutex
	services  map[string]*service
	listeners []*client.Listener
	calls     map[string]*running // running calls by caller and call id
	callers   map[string]*caller  // callers of acknowledged unary calls, by endpoint
	started   bool
	stopped   bool

	rejecting atomic.Int32 // RESOURCE_EXHAUSTED answers under way
}

// service is a registered service: its implementation, methods and
// service address.
type service struct {
	name    string
	impl    any
	scope   scope.Scope
	unary   map[string]*grpc.MethodDesc
	streams map[string]*grpc.StreamDesc
	meta    any
}

var _ grpc.ServiceRegistrar = (*Server)(nil)

// NewServer returns a Server on bus; it serves nothing before Start.
func NewServer(bus *client.Bus, opts ...Option) (*Server, error) {
	o, err := collectOptions(opts)
	if err != nil {
		return nil, err
	}
	sv := &Server{bus: bus, o: o, met: newMetrics(o.cfg.Registerer, "server"),
		unaryInt: chainUnaryServer(o.unarySrv),
		services: make(map[string]*service), calls: make(map[string]*running), callers: make(map[string]*caller)}
	if sv.ep, err = newEndpoint(bus, &sv.o.cfg, sv.met); err != nil {
		return nil, err
	}
	sv.ep.onPing, sv.ep.tick = sv.onPing, sv.watchCallers
	sv.ctx, sv.cancel = context.WithCancel(context.Background())
	return sv, nil
}

// RegisterService registers impl as the implementation of desc. It must
// be called before Start; later registrations are logged and ignored, as
// are duplicates.
func (sv *Server) RegisterService(desc *grpc.ServiceDesc, impl any) {
	if err := sv.register(desc, impl); err != nil {
		sv.o.cfg.Logger.Error("grpcbus: RegisterService", "service", desc.ServiceName, "err", err)
	}
}

func (sv *Server) register(desc *grpc.ServiceDesc, impl any) error {
	sc, err := serviceScope(sv.ep.prefix, desc.ServiceName)
	if err != nil {
		return fmt.Errorf("%w: service name: %w", ErrConfig, err)
	}
	svc := &service{name: desc.ServiceName, impl: impl, scope: sc, meta: desc.Metadata,
		unary: make(map[string]*grpc.MethodDesc), streams: make(map[string]*grpc.StreamDesc)}
	for i := range desc.Methods {
		svc.unary[desc.Methods[i].MethodName] = &desc.Methods[i]
	}
	for i := range desc.Streams {
		svc.streams[desc.Streams[i].StreamName] = &desc.Streams[i]
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.started {
		return ErrStarted
	}
	if _, dup := sv.services[desc.ServiceName]; dup {
		return fmt.Errorf("%w: service registered twice", ErrConfig)
	}
	sv.services[desc.ServiceName] = svc
	return nil
}

// GetServiceInfo describes the registered services, as grpc.Server does.
func (sv *Server) GetServiceInfo() map[string]grpc.ServiceInfo {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	out := make(map[string]grpc.ServiceInfo, len(sv.services))
	for name, svc := range sv.services {
		var ms []grpc.MethodInfo
		for m := range svc.unary {
			ms = append(ms, grpc.MethodInfo{Name: m})
		}
		for m, d := range svc.streams {
			ms = append(ms, grpc.MethodInfo{Name: m, IsClientStream: d.ClientStreams, IsServerStream: d.ServerStreams})
		}
		out[name] = grpc.ServiceInfo{Methods: ms, Metadata: svc.meta}
	}
	return out
}

// Start listens on the registered services' addresses and the server's
// private scope.
func (sv *Server) Start() error {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.stopped {
		return ErrClosed
	}
	if sv.started {
		return ErrStarted
	}
	sv.started = true
	if err := sv.ep.start(); err != nil {
		return err
	}
	want := client.WithFilter(func(ev *notification.Event) bool {
		return ev.Method == methodRequest || ev.Method == methodCancel
	})
	for _, svc := range sv.services {
		lis, err := sv.bus.NewListener(svc.scope, want, client.WithInlineDelivery(), client.WithoutConversion())
		if err != nil {
			return fmt.Errorf("grpcbus: listening on %s: %w", svc.scope, err)
		}
		lis.AddHandler(func(ev *client.Event) error { sv.onRequest(svc, ev); return nil })
		sv.listeners = append(sv.listeners, lis)
	}
	return nil
}

// Stop stops listening and ends every call: handlers' contexts are
// cancelled and clients of open streams get a Cancel. It is idempotent.
func (sv *Server) Stop() {
	sv.mu.Lock()
	if sv.stopped {
		sv.mu.Unlock()
		return
	}
	sv.stopped = true
	lis := sv.listeners
	sv.listeners = nil
	sv.mu.Unlock()
	for _, l := range lis {
		l.Close()
	}
	sv.cancel()
	if sv.started {
		sv.ep.close(codes.Unavailable)
	} else {
		sv.ep.pub.Close()
	}
}

// onRequest takes a REQUEST or CANCEL on a service address, on the
// delivering goroutine: the call itself runs on a goroutine of its own.
func (sv *Server) onRequest(svc *service, ev *client.Event) {
	infos := ev.MetaData.UserInfos
	from, _ := userInfo(infos, keyEndpoint)
	id, _ := userInfo(infos, keyCallID)
	if ev.Method == methodCancel {
		sv.cancelCall(from + " " + id)
		return
	}
	to, err := scope.Parse(from)
	if err != nil || !sv.ep.prefix.Contains(to) || id == "" {
		sv.met.drop(dropMalformed)
		return
	}
	rq := &request{svc: svc, ev: ev, to: to, from: from, callID: id, key: from + " " + id}
	rq.action, _ = userInfo(infos, keyAction)
	rq.format, _ = userInfo(infos, keyWireFormat)
	// The call is tracked before this returns, so that a CANCEL the
	// caller sends after it finds the call.
	rq.ctx, rq.cancel = sv.callContext(rq)
	if !sv.trackCall(rq) {
		rq.cancel()
		sv.reject(rq)
		return
	}
	go sv.serve(rq)
}

// reject answers RESOURCE_EXHAUSTED to a request past MaxCalls; past
// maxRejecting answers under way, the request is dropped and counted.
func (sv *Server) reject(rq *request) {
	if sv.rejecting.Add(1) > maxRejecting {
		sv.rejecting.Add(-1)
		sv.met.drop(dropOverflow)
		return
	}
	go func() {
		defer sv.rejecting.Add(-1)
		sv.fail(rq, status.New(codes.ResourceExhausted, "grpcbus: too many calls in progress"))
	}()
}

// request is a received request and where its reply goes.
type request struct {
	svc    *service
	ev     *client.Event
	to     scope.Scope
	from   string // the caller's endpoint
	callID string
	action string
	format string
	key    string // caller and call id, for CANCEL
	// ctx is the handler's context, cancel ends it.
	ctx    context.Context
	cancel context.CancelFunc
}

func (rq *request) fullMethod() string { return "/" + rq.svc.name + "/" + rq.action }

// serve answers one request: a unary call, or the opening of a stream.
func (sv *Server) serve(rq *request) {
	defer rq.cancel()
	defer sv.untrackCall(rq)
	if !sv.o.cfg.supports(rq.format) {
		sv.fail(rq, status.Newf(codes.Unimplemented, "grpcbus: wire format %q not supported", rq.format))
		return
	}
	if md := rq.svc.unary[rq.action]; md != nil {
		if _, ok := userInfo(rq.ev.MetaData.UserInfos, keyAck); ok {
			go sv.ack(rq) // in parallel with the handler: no round trip before the reply
		}
		sv.serveUnary(rq, md)
		return
	}
	if sd := rq.svc.streams[rq.action]; sd != nil {
		sv.serveStream(rq, sd)
		return
	}
	sv.fail(rq, status.Newf(codes.Unimplemented, "unknown method %s for service %s", rq.action, rq.svc.name))
}

// fail answers rq with st and counts the call.
func (sv *Server) fail(rq *request, st *status.Status) {
	sv.met.call(rq.fullMethod(), st.Code().String())
	sv.reply(rq, nil, st, nil)
}

// reply sends the REPLY to rq: data with status OK, or st's message;
// infos carry metadata and the handshake's answers.
func (sv *Server) reply(rq *request, data []byte, st *status.Status, infos []notification.UserInfo) {
	ev := &client.Event{}
	ev.Scope, ev.Method, ev.WireSchema, ev.Data = rq.to, methodReply, wireSchemaRaw, data
	ev.Causes = []notification.EventID{rq.ev.ID}
	infos = append(infos, notification.UserInfo{Key: keyCallID, Value: rq.callID},
		notification.UserInfo{Key: keyStatus, Value: fmt.Sprint(uint32(st.Code()))})
	if st.Code() != codes.OK {
		ev.WireSchema, ev.Data = wireSchemaErrorMsg, []byte(st.Message())
		infos = append(infos, notification.UserInfo{Key: rsbErrorKey, Value: "1"})
	}
	ev.MetaData.UserInfos = infos
	ctx, cancel := context.WithTimeout(sv.ctx, sv.o.cfg.PingTimeout)
	defer cancel()
	if err := sv.ep.pub.PublishEvent(ctx, ev); err != nil && sv.ctx.Err() == nil {
		sv.o.cfg.Logger.Warn("grpcbus: sending a reply failed", "to", rq.to.String(), "err", err)
	}
}

// callContext is the handler's context of rq: incoming metadata, the
// caller's deadline, cancelled when the server stops.
func (sv *Server) callContext(rq *request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(sv.ctx)
	if v, ok := userInfo(rq.ev.MetaData.UserInfos, keyTimeout); ok {
		if d, ok := parseTimeout(v); ok {
			var c2 context.CancelFunc
			ctx, c2 = context.WithTimeout(ctx, d)
			c1 := cancel
			cancel = func() { c2(); c1() }
		}
	}
	md := takeMetadata(rq.ev.MetaData.UserInfos, prefixHeader)
	if md == nil {
		md = metadata.MD{}
	}
	return metadata.NewIncomingContext(ctx, md), cancel
}

// handlerStatus is the status a handler's error stands for: its own, or
// CANCELLED / DEADLINE_EXCEEDED for context errors, UNKNOWN otherwise.
func handlerStatus(err error) *status.Status {
	if st, ok := status.FromError(err); ok {
		return st
	}
	return status.FromContextError(err)
}
