package grpcbus

import (
	"context"
	"io"
	"strconv"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/grpcbuspb"
	"github.com/rsbd/rsbd/scope"
)

// NewStream opens a streaming call. A call whose client streams opens at
// once (handshake on the service address); a server-streaming call opens
// with its one request message, in SendMsg.
func (c *ClientConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.stream(ctx, desc, nil, method, opts...)
}

// clientStream is the client side of a streaming call.
type clientStream struct {
	cc   *ClientConn
	ctx  context.Context
	desc *grpc.StreamDesc
	s    *stream
	co   callOpts

	hdrOnce  sync.Once
	hdrReady chan struct{}
	header   metadata.MD
	hdrGot   bool        // a Headers frame came (set before hdrReady closes)
	trailer  metadata.MD // set by the reader once Trailers arrived
	sent     bool        // the one request of a server-streaming call went
	closed   bool        // CloseSend done
}

func (c *ClientConn) newStream(ctx context.Context, desc *grpc.StreamDesc, _ *grpc.ClientConn, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	co := c.callOptions(opts)
	if !knownFormat(co.format) {
		return nil, status.Errorf(codes.Unimplemented, "grpcbus: wire format %q", co.format)
	}
	cs := &clientStream{cc: c, ctx: ctx, desc: desc, co: co, hdrReady: make(chan struct{})}
	s := newStream(c.ep, method, co.format, c.o.cfg.PingTimeout)
	s.onHeaders, s.onFinish = cs.gotHeaders, cs.finished
	if !c.ep.add(s) {
		c.met.call(method, codes.ResourceExhausted.String())
		return nil, status.Error(codes.ResourceExhausted, "grpcbus: too many open streams")
	}
	cs.s = s
	go cs.watch()
	if desc.ClientStreams {
		if err := cs.open(nil); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// open performs the handshake, with body as the request message of a
// server-streaming call.
func (cs *clientStream) open(body []byte) error {
	c, s := cs.cc, cs.s
	extra := []notification.UserInfo{
		{Key: keyEndpointFormat, Value: s.format},
		{Key: keyStreamID, Value: strconv.FormatUint(s.id, 10)},
		{Key: keyInitialWindow, Value: strconv.Itoa(s.window)},
		{Key: keyPingTimeout, Value: strconv.FormatInt(c.o.cfg.PingTimeout.Milliseconds(), 10)},
	}
	ctx, cancel := c.withCallTimeout(cs.ctx)
	defer cancel()
	rep, err := c.request(ctx, s.method, s.format, body, extra, waitOpen)
	if err == nil {
		err = replyStatus(rep)
	}
	if err == nil {
		err = cs.accept(rep)
	}
	if err != nil {
		s.finish(status.Convert(err))
		return err
	}
	return nil
}

// accept reads the handshake reply: the server's endpoint, its stream id
// and the window it grants.
func (cs *clientStream) accept(rep *client.Event) error {
	infos := rep.MetaData.UserInfos
	addr, _ := userInfo(infos, keyEndpoint)
	peer, err := scope.Parse(addr)
	id, okID := userInfoUint(infos, keyStreamID)
	win, okWin := userInfoUint(infos, keyInitialWindow)
	if err != nil || !cs.cc.ep.prefix.Contains(peer) || !okID || id == 0 || !okWin || win > maxWindow {
		return status.Error(codes.Internal, "grpcbus: malformed handshake reply")
	}
	cs.s.setPeer(peer, id, int(win))
	return nil
}

// watch ends the stream when the caller's context ends, telling the server.
func (cs *clientStream) watch() {
	select {
	case <-cs.ctx.Done():
		st := status.FromContextError(cs.ctx.Err())
		cs.s.abort(st.Code(), st.Message(), true)
	case <-cs.s.done:
	}
}

func (cs *clientStream) gotHeaders(md metadata.MD) {
	cs.hdrOnce.Do(func() {
		if md == nil {
			md = metadata.MD{}
		}
		cs.header, cs.hdrGot = md, true
		if cs.co.header != nil {
			*cs.co.header = md
		}
		close(cs.hdrReady)
	})
}

func (cs *clientStream) finished(st *status.Status) {
	cs.hdrOnce.Do(func() { close(cs.hdrReady) })
	cs.cc.met.call(cs.s.method, st.Code().String())
}

// Header waits for the response's leading metadata.
func (cs *clientStream) Header() (metadata.MD, error) {
	<-cs.hdrReady
	if cs.hdrGot {
		return cs.header, nil
	}
	return nil, cs.s.err()
}

// Trailer returns the trailing metadata once the stream ended.
func (cs *clientStream) Trailer() metadata.MD { return cs.trailer }

// Context returns the call's context.
func (cs *clientStream) Context() context.Context { return cs.ctx }

// CloseSend half-closes the request stream once the queued messages are
// sent.
func (cs *clientStream) CloseSend() error {
	if !cs.desc.ClientStreams || cs.closed || cs.s.ended() {
		return nil
	}
	cs.closed = true
	fr := &grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_HalfClose{HalfClose: &grpcbuspb.HalfClose{}}}
	_ = cs.s.snd.send(cs.ctx, outFrame{fr: fr})
	return nil
}

// SendMsg sends a request message. As over HTTP/2, it returns io.EOF once
// the stream has ended; RecvMsg then gives the status.
func (cs *clientStream) SendMsg(m any) error {
	if cs.s.ended() {
		return io.EOF
	}
	data, err := marshal(cs.s.format, m)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	if !cs.desc.ClientStreams {
		if cs.sent {
			return status.Error(codes.Internal, "grpcbus: second request on a server-streaming call")
		}
		cs.sent = true
		// As with grpc-go, a failed opening of a call whose client does not
		// stream returns nil here: RecvMsg gives its status.
		_ = cs.open(data)
		return nil
	}
	if err := cs.s.snd.send(cs.ctx, outFrame{payload: data, isMsg: true}); err != nil {
		return io.EOF
	}
	return nil
}

// RecvMsg receives a response message; io.EOF ends a stream with status
// OK. A call whose server does not stream reads on to the status after
// its message.
func (cs *clientStream) RecvMsg(m any) error {
	err := cs.recv(m)
	if err != nil || cs.desc.ServerStreams {
		return err
	}
	switch err := cs.recv(m); err {
	case io.EOF:
		return nil
	case nil:
		cs.s.abort(codes.Internal, "grpcbus: second response on a unary-response call", true)
		return cs.s.err()
	default:
		return err
	}
}

func (cs *clientStream) recv(m any) error {
	for {
		in, err := cs.s.next()
		if err != nil {
			return err
		}
		if in.fr == nil {
			if err := unmarshal(cs.s.format, in.payload, m); err != nil {
				cs.s.abort(codes.Internal, "grpcbus: decoding a response: "+err.Error(), true)
				return cs.s.err()
			}
			return nil
		}
		switch v := in.fr.Frame.(type) {
		case *grpcbuspb.TransportFrame_Trailers:
			cs.trailer = takeMetadata(in.infos, prefixTrailer)
			if cs.co.trailer != nil {
				*cs.co.trailer = cs.trailer
			}
			st := status.New(codes.Code(v.Trailers.Status), v.Trailers.StatusMessage)
			cs.s.finish(st)
			if st.Code() == codes.OK {
				return io.EOF
			}
			return st.Err()
		default:
			cs.cc.met.drop(dropUnexpected)
		}
	}
}
