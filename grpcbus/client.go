package grpcbus

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// ClientConn calls gRPC services over the bus. It implements
// grpc.ClientConnInterface, so generated clients take it as they take a
// *grpc.ClientConn. It is safe for concurrent use.
type ClientConn struct {
	ep     *endpoint
	o      options
	met    *metrics
	unary  grpc.UnaryInvoker
	stream grpc.Streamer

	mu      sync.Mutex
	pending map[string]*call
	callSeq atomic.Uint64

	// awaiting, heardAt and lastPing belong to the endpoint's goroutine:
	// the server endpoints pinged and not yet answered, and when each one
	// last answered a ping.
	awaiting map[string]bool
	heardAt  map[string]time.Time
	lastPing time.Time
	pingSeq  atomic.Uint64 // pings sent

}

var _ grpc.ClientConnInterface = (*ClientConn)(nil)

// NewClientConn returns a ClientConn calling services over bus. Close it
// when done; it does not close bus.
func NewClientConn(bus *client.Bus, opts ...Option) (*ClientConn, error) {
	o, err := collectOptions(opts)
	if err != nil {
		return nil, err
	}
	c := &ClientConn{o: o, met: newMetrics(o.cfg.Registerer, "client"),
		pending: make(map[string]*call), awaiting: make(map[string]bool), heardAt: make(map[string]time.Time)}
	if c.ep, err = newEndpoint(bus, &c.o.cfg, c.met); err != nil {
		return nil, err
	}
	c.ep.onEvent, c.ep.onPing, c.ep.tick = c.onReply, c.onPing, c.tick
	c.unary = chainUnaryClient(o.unaryClient, c.invoke)
	c.stream = chainStreamClient(o.streamCl, c.newStream)
	if err := c.ep.start(); err != nil {
		return nil, err
	}
	return c, nil
}

// Close cancels the open streams (telling their servers) and leaves the
// bus; calls still waiting fail.
func (c *ClientConn) Close() error {
	c.ep.close(codes.Canceled)
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, cl := range c.pending {
		close(cl.reply)
		delete(c.pending, id)
	}
	return nil
}

// Invoke performs a unary call: one request on the service address and
// its reply.
func (c *ClientConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return c.unary(ctx, method, args, reply, nil, opts...)
}

// invoke is the unary call under the interceptors.
func (c *ClientConn) invoke(ctx context.Context, method string, args, reply any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
	co := c.callOptions(opts)
	err := c.roundTrip(ctx, method, args, reply, co)
	c.met.call(method, status.Code(err).String())
	return err
}

func (c *ClientConn) roundTrip(ctx context.Context, method string, args, reply any, co callOpts) error {
	data, err := marshal(co.format, args)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	ctx, cancel := c.withCallTimeout(ctx)
	defer cancel()
	wait := waitDeadline
	if c.o.cfg.AckTimeout > 0 {
		wait = waitAck
	}
	rep, err := c.request(ctx, method, co.format, data, nil, wait)
	if err != nil {
		return err
	}
	co.setHeader(takeMetadata(rep.MetaData.UserInfos, prefixHeader))
	co.setTrailer(takeMetadata(rep.MetaData.UserInfos, prefixTrailer))
	if err := replyStatus(rep); err != nil {
		return err
	}
	if err := unmarshal(co.format, rep.Data, reply); err != nil {
		return status.Errorf(codes.Internal, "grpcbus: decoding the response: %v", err)
	}
	return nil
}

// withCallTimeout bounds ctx by the configured call timeout when it has no
// deadline.
func (c *ClientConn) withCallTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.o.cfg.CallTimeout)
}

// waitMode says how long a request waits for a sign of a server.
type waitMode int

const (
	// waitDeadline waits for the reply until the context ends.
	waitDeadline waitMode = iota
	// waitAck asks for an acknowledgement, which must come within
	// AckTimeout; the acknowledging server is then pinged (watchCalls).
	waitAck
	// waitOpen expects the reply itself within OpenTimeout: a stream's
	// handshake, which servers answer before the handler runs.
	waitOpen
)

// request publishes a REQUEST for method on its service address, with
// extra user infos, and waits for its reply. A ctx that ends first sends
// the server a CANCEL and gives the context's status. A request waiting
// for a sign of a server (wait) fails with UNAVAILABLE when none comes in
// time, or when the acknowledging server falls silent (see watchCalls).
func (c *ClientConn) request(ctx context.Context, method, format string, data []byte, extra []notification.UserInfo, wait waitMode) (*client.Event, error) {
	service, _, ok := splitMethod(method)
	if !ok {
		return nil, status.Errorf(codes.Internal, "grpcbus: malformed method name %q", method)
	}
	sc, err := serviceScope(c.ep.prefix, service)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "grpcbus: service %q: %v", service, err)
	}
	id := strconv.FormatUint(c.callSeq.Add(1), 36)
	ev := &client.Event{}
	ev.Scope, ev.Method, ev.WireSchema, ev.Data = sc, methodRequest, wireSchemaRaw, data
	if data == nil {
		ev.WireSchema = notification.SchemaVoid
	}
	if wait == waitAck {
		extra = append(extra, notification.UserInfo{Key: keyAck, Value: "1"},
			notification.UserInfo{Key: keyPingTimeout, Value: strconv.FormatInt(c.o.cfg.PingTimeout.Milliseconds(), 10)})
	}
	ev.MetaData.UserInfos = c.requestInfos(ctx, method, format, id, extra)
	cl, err := c.expect(id)
	if err != nil {
		return nil, err
	}
	defer c.forget(id)
	if err := c.ep.pub.PublishEvent(ctx, ev); err != nil {
		return nil, status.Errorf(codeOf(err), "grpcbus: sending the request: %v", err)
	}
	var noAck <-chan time.Time
	acked, limit := cl.acked, c.o.cfg.AckTimeout
	if wait != waitAck {
		acked, limit = nil, c.o.cfg.OpenTimeout
	}
	if wait != waitDeadline && limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		noAck = t.C
	}
	for {
		select {
		case rep, ok := <-cl.reply:
			if !ok {
				return nil, status.Error(codes.Canceled, "grpcbus: client connection closed")
			}
			return rep, nil
		case <-acked:
			acked, noAck = nil, nil
		case <-noAck:
			go c.cancelCall(sc, id) // a server may yet be slow to answer
			return nil, status.Errorf(codes.Unavailable, "%v within %v", ErrNoServer, limit)
		case <-cl.lost:
			go c.cancelCall(sc, id)
			return nil, status.Errorf(codes.Unavailable, "%v for %v", ErrServerSilent, c.o.cfg.PingTimeout)
		case <-ctx.Done():
			// A server holds its own copy of the deadline; only a
			// cancellation needs telling.
			if ctx.Err() == context.Canceled {
				go c.cancelCall(sc, id)
			}
			return nil, ctxStatus(ctx)
		}
	}
}

// requestInfos builds the user infos of a request.
func (c *ClientConn) requestInfos(ctx context.Context, method, format, id string, extra []notification.UserInfo) []notification.UserInfo {
	_, name, _ := splitMethod(method)
	infos := append([]notification.UserInfo{
		{Key: keyAction, Value: name}, {Key: keyWireFormat, Value: format},
		{Key: keyEndpoint, Value: c.ep.addr}, {Key: keyCallID, Value: id},
	}, extra...)
	if dl, ok := ctx.Deadline(); ok {
		infos = append(infos, notification.UserInfo{Key: keyTimeout, Value: formatTimeout(time.Until(dl))})
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	return putMetadata(infos, prefixHeader, md)
}

// cancelCall tells the servers of sc that call id is abandoned.
func (c *ClientConn) cancelCall(sc scope.Scope, id string) {
	ev := &client.Event{}
	ev.Scope, ev.Method, ev.WireSchema = sc, methodCancel, notification.SchemaVoid
	ev.MetaData.UserInfos = []notification.UserInfo{{Key: keyEndpoint, Value: c.ep.addr}, {Key: keyCallID, Value: id}}
	ctx, cancel := context.WithTimeout(c.ep.ctx, cancelSendTimeout)
	defer cancel()
	_ = c.ep.pub.PublishEvent(ctx, ev)
}

// expect registers a call waiting for its reply.
func (c *ClientConn) expect(id string) (*call, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ep.ctx.Err() != nil {
		return nil, status.Error(codes.Canceled, "grpcbus: client connection closed")
	}
	if len(c.pending) >= maxPendingReplies {
		return nil, status.Error(codes.ResourceExhausted, "grpcbus: too many calls waiting for replies")
	}
	cl := newCall()
	c.pending[id] = cl
	return cl, nil
}

func (c *ClientConn) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, id)
}

// onReply hands a reply or an acknowledgement to the call waiting for it;
// others are counted and dropped, except acknowledgements of calls already
// answered (the ack races the reply). It runs on the delivering goroutine.
func (c *ClientConn) onReply(ev *client.Event) {
	id, _ := userInfo(ev.MetaData.UserInfos, keyCallID)
	if ev.Method == methodAck {
		c.onAck(id, ev)
		return
	}
	c.mu.Lock()
	cl, ok := c.pending[id]
	if ok && ev.Method == methodReply {
		delete(c.pending, id)
	}
	c.mu.Unlock()
	if !ok || ev.Method != methodReply {
		c.met.drop(dropUnexpected)
		return
	}
	cl.reply <- ev // buffered for exactly this reply
}

// replyStatus returns the status error a reply carries, nil for OK.
func replyStatus(rep *client.Event) error {
	code := codes.OK
	if n, ok := userInfoUint(rep.MetaData.UserInfos, keyStatus); ok && n <= uint64(codes.Unauthenticated) {
		code = codes.Code(n)
	}
	if _, failed := userInfo(rep.MetaData.UserInfos, rsbErrorKey); failed {
		if code == codes.OK {
			code = codes.Unknown
		}
		return status.Error(code, string(rep.Data))
	}
	if code != codes.OK {
		return status.Error(code, "")
	}
	return nil
}

// callOpts are the call options this transport honours.
type callOpts struct {
	format  string
	header  *metadata.MD
	trailer *metadata.MD
}

func (c *ClientConn) callOptions(opts []grpc.CallOption) callOpts {
	co := callOpts{format: c.o.cfg.WireFormat}
	for _, o := range opts {
		switch v := o.(type) {
		case grpc.HeaderCallOption:
			co.header = v.HeaderAddr
		case grpc.TrailerCallOption:
			co.trailer = v.TrailerAddr
		case grpc.ContentSubtypeCallOption:
			co.format = v.ContentSubtype
		}
	}
	return co
}

func (co callOpts) setHeader(md metadata.MD) {
	if co.header != nil {
		*co.header = md
	}
}

func (co callOpts) setTrailer(md metadata.MD) {
	if co.trailer != nil {
		*co.trailer = md
	}
}

// String names the connection's endpoint, for logs.
func (c *ClientConn) String() string { return fmt.Sprintf("grpcbus.ClientConn(%s)", c.ep.addr) }
