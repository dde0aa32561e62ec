package grpcbus

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
)

// serveUnary runs a unary handler and replies with its answer.
func (sv *Server) serveUnary(rq *request, md *grpc.MethodDesc) {
	ts := &unaryTransport{method: rq.fullMethod()}
	ctx := grpc.NewContextWithServerTransportStream(rq.ctx, ts)
	dec := func(v any) error {
		if err := unmarshal(rq.format, rq.ev.Data, v); err != nil {
			return status.Errorf(codes.Internal, "grpcbus: decoding the request: %v", err)
		}
		return nil
	}
	resp, err := sv.invokeUnary(md, rq.svc.impl, ctx, dec)
	st := handlerStatus(err)
	var data []byte
	if err == nil {
		if data, err = marshal(rq.format, resp); err != nil {
			st = status.Newf(codes.Internal, "grpcbus: encoding the response: %v", err)
		}
	}
	infos := putMetadata(nil, prefixHeader, ts.header)
	infos = putMetadata(infos, prefixTrailer, ts.trailer)
	sv.met.call(rq.fullMethod(), st.Code().String())
	sv.reply(rq, data, st, infos)
}

// ack acknowledges a unary request that asks for it: an ACK event on the
// caller's private scope naming the server's endpoint, which the caller
// then pings while the handler runs.
func (sv *Server) ack(rq *request) {
	if rq.ctx.Err() != nil {
		return // the call is over: its reply went or goes instead
	}
	ev := &client.Event{}
	ev.Scope, ev.Method, ev.WireSchema = rq.to, methodAck, notification.SchemaVoid
	ev.Causes = []notification.EventID{rq.ev.ID}
	ev.MetaData.UserInfos = []notification.UserInfo{{Key: keyCallID, Value: rq.callID}, {Key: keyEndpoint, Value: sv.ep.addr}}
	ctx, cancel := context.WithTimeout(rq.ctx, sv.o.cfg.PingTimeout)
	defer cancel()
	if err := sv.ep.pub.PublishEvent(ctx, ev); err != nil && rq.ctx.Err() == nil {
		sv.o.cfg.Logger.Debug("grpcbus: sending an acknowledgement failed", "to", rq.to.String(), "err", err)
	}
}

// invokeUnary calls the method's handler, turning a panic into INTERNAL.
func (sv *Server) invokeUnary(md *grpc.MethodDesc, impl any, ctx context.Context, dec func(any) error) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			sv.o.cfg.Logger.Error("grpcbus: handler panicked", "method", md.MethodName, "panic", p)
			err = status.Errorf(codes.Internal, "grpcbus: handler panicked: %v", p)
		}
	}()
	return md.Handler(impl, ctx, dec, sv.unaryInt)
}

// unaryTransport collects the metadata a unary handler sets with
// grpc.SetHeader, grpc.SendHeader and grpc.SetTrailer.
type unaryTransport struct {
	method string

	mu              sync.Mutex
	header, trailer metadata.MD
}

func (t *unaryTransport) Method() string { return t.method }

func (t *unaryTransport) SetHeader(md metadata.MD) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.header = metadata.Join(t.header, md)
	return nil
}

func (t *unaryTransport) SendHeader(md metadata.MD) error { return t.SetHeader(md) }

func (t *unaryTransport) SetTrailer(md metadata.MD) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trailer = metadata.Join(t.trailer, md)
	return nil
}
