package grpcbus

import (
	"context"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/grpcbuspb"
)

// serveStream opens a stream (answering the handshake) and runs its
// handler.
func (sv *Server) serveStream(rq *request, sd *grpc.StreamDesc) {
	infos := rq.ev.MetaData.UserInfos
	peerID, okID := userInfoUint(infos, keyStreamID)
	win, okWin := userInfoUint(infos, keyInitialWindow)
	if !okID || peerID == 0 || !okWin || win > maxWindow {
		sv.fail(rq, status.New(codes.InvalidArgument, "grpcbus: malformed stream handshake"))
		return
	}
	s := newStream(sv.ep, rq.fullMethod(), rq.format, sv.pingTimeout(infos))
	ctx, cancel := rq.ctx, rq.cancel
	ss := &serverStream{sv: sv, s: s, desc: sd}
	s.onFinish = func(st *status.Status) {
		cancel()
		sv.met.call(s.method, st.Code().String())
	}
	if !sv.ep.add(s) {
		sv.fail(rq, status.New(codes.ResourceExhausted, "grpcbus: too many open streams"))
		return
	}
	s.setPeer(rq.to, peerID, int(win))
	sv.reply(rq, nil, status.New(codes.OK, ""), []notification.UserInfo{
		{Key: keyEndpoint, Value: sv.ep.addr}, {Key: keyEndpointFormat, Value: rq.format},
		{Key: keyStreamID, Value: strconv.FormatUint(s.id, 10)},
		{Key: keyInitialWindow, Value: strconv.Itoa(s.window)},
	})
	if !sd.ClientStreams {
		s.inbox.preload(inFrame{payload: rq.ev.Data})
		s.inbox.putControl(inFrame{fr: &grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_HalfClose{}}})
	}
	ss.ctx = grpc.NewContextWithServerTransportStream(ctx, &streamTransport{ss})
	info := &grpc.StreamServerInfo{FullMethod: s.method, IsClientStream: sd.ClientStreams, IsServerStream: sd.ServerStreams}
	ss.end(sv.runStream(chainStreamServer(sv.o.streamSrv, info, sd.Handler), rq.svc.impl, ss))
}

// runStream calls the handler, turning a panic into INTERNAL.
func (sv *Server) runStream(h grpc.StreamHandler, impl any, ss *serverStream) (err error) {
	defer func() {
		if p := recover(); p != nil {
			sv.o.cfg.Logger.Error("grpcbus: handler panicked", "method", ss.s.method, "panic", p)
			err = status.Errorf(codes.Internal, "grpcbus: handler panicked: %v", p)
		}
	}()
	return h(impl, ss)
}

// pingTimeout is how long the server waits to hear from a client: what
// the client asked for, capped by MaxPingTimeout.
func (sv *Server) pingTimeout(infos []notification.UserInfo) time.Duration {
	ms, ok := userInfoUint(infos, keyPingTimeout)
	limit := sv.o.cfg.MaxPingTimeout
	if !ok || ms == 0 || ms > uint64(limit.Milliseconds()) {
		return limit
	}
	return time.Duration(ms) * time.Millisecond
}

// serverStream is the server side of a streaming call, as handlers see it.
type serverStream struct {
	sv   *Server
	s    *stream
	desc *grpc.StreamDesc
	ctx  context.Context

	mu          sync.Mutex
	header      metadata.MD
	trailer     metadata.MD
	headerSent  bool
	halfClosed  bool
	sendHeaders sync.Mutex  // held while the Headers frame goes out
	headersOut  atomic.Bool // the Headers frame was handed to the sender
}

// end finishes the stream with the handler's result: leading metadata if
// not sent yet, then Trailers once the queued messages are out.
func (ss *serverStream) end(err error) {
	st := handlerStatus(err)
	if ss.s.ended() {
		return
	}
	if err := ss.SendHeader(nil); err != nil {
		return
	}
	ss.mu.Lock()
	infos := putMetadata(nil, prefixTrailer, ss.trailer)
	ss.mu.Unlock()
	fr := &grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_Trailers{
		Trailers: &grpcbuspb.Trailers{Status: uint32(st.Code()), StatusMessage: st.Message()}}}
	if err := ss.s.snd.send(ss.sv.ep.ctx, outFrame{fr: fr, infos: infos}); err != nil {
		return
	}
	if ss.s.snd.waitDrained(ss.sv.ep.ctx) == nil {
		ss.s.finish(st)
	}
}

// SetHeader adds leading metadata, until it is sent.
func (ss *serverStream) SetHeader(md metadata.MD) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.headerSent {
		return status.Error(codes.Internal, "grpcbus: headers already sent")
	}
	ss.header = metadata.Join(ss.header, md)
	return nil
}

// SendHeader sends the leading metadata (with md) now; only once.
func (ss *serverStream) SendHeader(md metadata.MD) error {
	ss.sendHeaders.Lock()
	defer ss.sendHeaders.Unlock()
	ss.mu.Lock()
	if ss.headerSent {
		ss.mu.Unlock()
		if md != nil {
			return status.Error(codes.Internal, "grpcbus: headers already sent")
		}
		return nil
	}
	ss.headerSent = true
	infos := putMetadata(nil, prefixHeader, metadata.Join(ss.header, md))
	ss.mu.Unlock()
	fr := &grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_Headers{Headers: &grpcbuspb.Headers{}}}
	err := ss.s.snd.send(ss.ctx, outFrame{fr: fr, infos: infos})
	ss.headersOut.Store(true)
	return err
}

// SetTrailer adds trailing metadata.
func (ss *serverStream) SetTrailer(md metadata.MD) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.trailer = metadata.Join(ss.trailer, md)
}

// Context returns the handler's context: metadata, deadline, and
// cancellation by the client, the server or silence.
func (ss *serverStream) Context() context.Context { return ss.ctx }

// SendMsg sends a response message, waiting while the client's window is
// spent and the buffer full.
func (ss *serverStream) SendMsg(m any) error {
	if !ss.headersOut.Load() {
		if err := ss.SendHeader(nil); err != nil {
			return err
		}
	}
	data, err := marshal(ss.s.format, m)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return ss.s.snd.send(ss.ctx, outFrame{payload: data, isMsg: true})
}

// RecvMsg receives a request message; io.EOF once the client half-closed.
func (ss *serverStream) RecvMsg(m any) error {
	if ss.halfClosed {
		return io.EOF
	}
	for {
		in, err := ss.s.next()
		if err != nil {
			return err
		}
		if in.fr == nil {
			if err := unmarshal(ss.s.format, in.payload, m); err != nil {
				return status.Errorf(codes.Internal, "grpcbus: decoding a request: %v", err)
			}
			return nil
		}
		switch in.fr.Frame.(type) {
		case *grpcbuspb.TransportFrame_HalfClose:
			ss.halfClosed = true
			return io.EOF
		default:
			ss.sv.met.drop(dropUnexpected)
		}
	}
}

// streamTransport lets grpc.SetHeader and friends reach a stream.
type streamTransport struct{ ss *serverStream }

func (t *streamTransport) Method() string                  { return t.ss.s.method }
func (t *streamTransport) SetHeader(md metadata.MD) error  { return t.ss.SetHeader(md) }
func (t *streamTransport) SendHeader(md metadata.MD) error { return t.ss.SendHeader(md) }
func (t *streamTransport) SetTrailer(md metadata.MD) error { t.ss.SetTrailer(md); return nil }
