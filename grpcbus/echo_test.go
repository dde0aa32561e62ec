package grpcbus

import (
	"context"
	"flag"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/node"
	pb "github.com/rsbd/rsbd/proto/grpcbustestpb"
)

// echoServer implements the test service the same way for both
// transports. ended receives the error of every handler context that
// ended before the handler did its work.
type echoServer struct {
	pb.UnimplementedEchoServer
	ended   chan error
	sent    atomic.Int64 // messages ServerStream sent
	waiting atomic.Int64 // handlers that began to wait
}

func newEchoServer() *echoServer { return &echoServer{ended: make(chan error, 16)} }

// wait waits wait_ms or until ctx ends, which it reports.
func (e *echoServer) wait(ctx context.Context, req *pb.EchoRequest) error {
	if req.WaitMs <= 0 {
		return nil
	}
	e.waiting.Add(1)
	t := time.NewTimer(time.Duration(req.WaitMs) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		select {
		case e.ended <- ctx.Err():
		default:
		}
		return status.FromContextError(ctx.Err()).Err()
	}
}

func (e *echoServer) Unary(ctx context.Context, req *pb.EchoRequest) (*pb.EchoResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	_ = grpc.SetHeader(ctx, metadata.Pairs("x-hdr", req.Text))
	_ = grpc.SetTrailer(ctx, metadata.Pairs("x-trl", "t-"+req.Text))
	if err := e.wait(ctx, req); err != nil {
		return nil, err
	}
	if req.FailCode != 0 {
		return nil, status.Errorf(codes.Code(req.FailCode), "failed %s", req.Text)
	}
	text := req.Text + "|" + strings.Join(md.Get("x-in"), ",") + "|" + strings.Join(md.Get("x-ci"), ",")
	return &pb.EchoResponse{Text: text, Pad: req.Pad}, nil
}

func (e *echoServer) ServerStream(req *pb.EchoRequest, st grpc.ServerStreamingServer[pb.EchoResponse]) error {
	_ = st.SetHeader(metadata.Pairs("x-hdr", req.Text))
	st.SetTrailer(metadata.Pairs("x-trl", "t-"+req.Text))
	for i := range req.Count {
		if err := st.Send(&pb.EchoResponse{Text: req.Text, Seq: i + 1, Pad: req.Pad}); err != nil {
			return err
		}
		e.sent.Add(1)
	}
	if err := e.wait(st.Context(), req); err != nil {
		return err
	}
	if req.FailCode != 0 {
		return status.Errorf(codes.Code(req.FailCode), "failed %s", req.Text)
	}
	return nil
}

func (e *echoServer) ClientStream(st grpc.ClientStreamingServer[pb.EchoRequest, pb.EchoResponse]) error {
	var texts []string
	for {
		req, err := st.Recv()
		if err == io.EOF {
			return st.SendAndClose(&pb.EchoResponse{Text: strings.Join(texts, "+"), Seq: int32(len(texts))})
		}
		if err != nil {
			return err
		}
		if req.FailCode != 0 {
			return status.Errorf(codes.Code(req.FailCode), "failed %s", req.Text)
		}
		texts = append(texts, req.Text)
	}
}

func (e *echoServer) Bidi(st grpc.BidiStreamingServer[pb.EchoRequest, pb.EchoResponse]) error {
	for i := int32(1); ; i++ {
		req, err := st.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			select {
			case e.ended <- st.Context().Err():
			default:
			}
			return err
		}
		if err := st.Send(&pb.EchoResponse{Text: "re:" + req.Text, Seq: i, Pad: req.Pad}); err != nil {
			return err
		}
	}
}

// Interceptors used on both transports: the client adds metadata, the
// server adds a header, so the results show both ran.
func clientUnaryInt(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return inv(metadata.AppendToOutgoingContext(ctx, "x-ci", "1"), method, req, reply, cc, opts...)
}

func clientStreamInt(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, s grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return s(metadata.AppendToOutgoingContext(ctx, "x-ci", "1"), desc, cc, method, opts...)
}

func serverUnaryInt(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	_ = grpc.SetHeader(ctx, metadata.Pairs("x-si", info.FullMethod))
	return h(ctx, req)
}

func serverStreamInt(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	_ = ss.SetHeader(metadata.Pairs("x-si", info.FullMethod))
	return h(srv, ss)
}

// testConfig is a Config with quick liveness for tests.
func testConfig() Config {
	c := DefaultConfig()
	c.PingInterval, c.PingTimeout = 100*time.Millisecond, 600*time.Millisecond
	if flag.Parsed() {
		c.Logger = clienttest.Logger()
	}
	return c
}

// embeddedBus returns a Bus on node n, closed at the end of the test.
func embeddedBus(t testing.TB, i int, nodes []*node.Node) *client.Bus {
	t.Helper()
	b, err := client.EmbeddedConfig(nodes[i], client.Config{Logger: clienttest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// startBusServer serves impl on bus with the test interceptors.
func startBusServer(t testing.TB, bus *client.Bus, impl pb.EchoServer, cfg Config) *Server {
	t.Helper()
	srv, err := NewServer(bus, WithConfig(cfg), WithUnaryServerInterceptor(serverUnaryInt),
		WithStreamServerInterceptor(serverStreamInt))
	if err != nil {
		t.Fatal(err)
	}
	pb.RegisterEchoServer(srv, impl)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// busConn returns a ClientConn on bus with the test interceptors.
func busConn(t testing.TB, bus *client.Bus, cfg Config) *ClientConn {
	t.Helper()
	cc, err := NewClientConn(bus, WithConfig(cfg), WithUnaryClientInterceptor(clientUnaryInt),
		WithStreamClientInterceptor(clientStreamInt))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// startHTTP2 serves impl with grpc-go's own server on loopback and returns
// a grpc-go client of it.
func startHTTP2(t testing.TB, impl pb.EchoServer) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(serverUnaryInt), grpc.ChainStreamInterceptor(serverStreamInt))
	pb.RegisterEchoServer(gs, impl)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(clientUnaryInt), grpc.WithChainStreamInterceptor(clientStreamInt))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// dialBus connects a Bus over the socket transport.
func dialBus(t testing.TB, target string) *client.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := client.DialConfig(ctx, target, client.Config{Logger: clienttest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
