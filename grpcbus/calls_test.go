package grpcbus

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	pb "github.com/rsbd/rsbd/proto/grpcbustestpb"
)

// scenario is one call through the generated stubs; it describes what it
// saw (answers, metadata, status code) as text to compare across
// transports.
type scenario struct {
	name string
	run  func(ctx context.Context, c pb.EchoClient) string
}

func code(err error) string { return status.Code(err).String() }

func mdText(md metadata.MD, keys ...string) string {
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+strings.Join(md.Get(k), ","))
	}
	return strings.Join(parts, " ")
}

var scenarios = []scenario{
	{"unary", func(ctx context.Context, c pb.EchoClient) string {
		var hdr, trl metadata.MD
		ctx = metadata.AppendToOutgoingContext(ctx, "x-in", "v1", "x-in", "v2")
		r, err := c.Unary(ctx, &pb.EchoRequest{Text: "hi", Pad: []byte{1, 2}}, grpc.Header(&hdr), grpc.Trailer(&trl))
		return fmt.Sprintf("%s %q %v %s %s", code(err), r.GetText(), r.GetPad(), mdText(hdr, "x-hdr", "x-si"), mdText(trl, "x-trl"))
	}},
	{"unary-error", func(ctx context.Context, c pb.EchoClient) string {
		var trl metadata.MD
		_, err := c.Unary(ctx, &pb.EchoRequest{Text: "e", FailCode: int32(codes.NotFound)}, grpc.Trailer(&trl))
		return fmt.Sprintf("%s %q %s", code(err), status.Convert(err).Message(), mdText(trl, "x-trl"))
	}},
	{"unary-deadline", func(ctx context.Context, c pb.EchoClient) string {
		ctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
		defer cancel()
		_, err := c.Unary(ctx, &pb.EchoRequest{Text: "slow", WaitMs: 5000})
		return code(err)
	}},
	{"unknown-method", func(ctx context.Context, c pb.EchoClient) string {
		return code(grpcInvoke(ctx, c, "/rsbd.grpcbustest.Echo/Nope"))
	}},
	{"server-stream", func(ctx context.Context, c pb.EchoClient) string {
		st, err := c.ServerStream(ctx, &pb.EchoRequest{Text: "s", Count: 5})
		if err != nil {
			return code(err)
		}
		got, err := drain(st.Recv)
		hdr, _ := st.Header()
		return fmt.Sprintf("%v %s %s %s", got, code(err), mdText(hdr, "x-hdr", "x-si"), mdText(st.Trailer(), "x-trl"))
	}},
	{"server-stream-error", func(ctx context.Context, c pb.EchoClient) string {
		st, err := c.ServerStream(ctx, &pb.EchoRequest{Text: "f", Count: 2, FailCode: int32(codes.Aborted)})
		if err != nil {
			return code(err)
		}
		got, err := drain(st.Recv)
		return fmt.Sprintf("%v %s %q", got, code(err), status.Convert(err).Message())
	}},
	{"client-stream", func(ctx context.Context, c pb.EchoClient) string {
		st, err := c.ClientStream(ctx)
		if err != nil {
			return code(err)
		}
		for _, s := range []string{"a", "b", "c"} {
			if err := st.Send(&pb.EchoRequest{Text: s}); err != nil {
				return "send " + code(err)
			}
		}
		r, err := st.CloseAndRecv()
		return fmt.Sprintf("%s %q %d", code(err), r.GetText(), r.GetSeq())
	}},
	{"client-stream-error", func(ctx context.Context, c pb.EchoClient) string {
		st, err := c.ClientStream(ctx)
		if err != nil {
			return code(err)
		}
		_ = st.Send(&pb.EchoRequest{Text: "x", FailCode: int32(codes.InvalidArgument)})
		_, err = st.CloseAndRecv()
		return code(err)
	}},
	{"bidi", func(ctx context.Context, c pb.EchoClient) string {
		st, err := c.Bidi(ctx)
		if err != nil {
			return code(err)
		}
		var got []string
		for i := range 4 {
			if err := st.Send(&pb.EchoRequest{Text: fmt.Sprint(i)}); err != nil {
				return "send " + code(err)
			}
			r, err := st.Recv()
			if err != nil {
				return "recv " + code(err)
			}
			got = append(got, fmt.Sprintf("%s#%d", r.Text, r.Seq))
		}
		_ = st.CloseSend()
		_, err = st.Recv()
		return fmt.Sprintf("%v %v", got, err)
	}},
}

// grpcInvoke calls method through the connection the client was made
// with, which the generated client does not expose: it goes through the
// Unary stub's connection by an interceptor-free path.
func grpcInvoke(ctx context.Context, c pb.EchoClient, method string) error {
	return c.(interface {
		invoke(context.Context, string) error
	}).invoke(ctx, method)
}

// drain reads a stream to its end.
func drain(recv func() (*pb.EchoResponse, error)) ([]string, error) {
	var got []string
	for {
		r, err := recv()
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, fmt.Sprintf("%s#%d", r.Text, r.Seq))
	}
}

// runAll runs every scenario on conn.
func runAll(t *testing.T, conn grpc.ClientConnInterface) []string {
	t.Helper()
	c := echoClient{pb.NewEchoClient(conn), conn}
	var out []string
	for _, s := range scenarios {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out = append(out, s.name+": "+s.run(ctx, c))
		cancel()
	}
	return out
}

// echoClient is the generated client with the raw connection beside it.
type echoClient struct {
	pb.EchoClient
	conn grpc.ClientConnInterface
}

func (c echoClient) invoke(ctx context.Context, method string) error {
	return c.conn.Invoke(ctx, method, &pb.EchoRequest{}, &pb.EchoResponse{})
}

// compare runs the scenarios over the bus and over HTTP/2 and requires
// the same results.
func compare(t *testing.T, conn grpc.ClientConnInterface) {
	t.Helper()
	want := runAll(t, startHTTP2(t, newEchoServer()))
	got := runAll(t, conn)
	if !slices.Equal(got, want) {
		t.Errorf("bus and HTTP/2 differ:\nbus:\n  %s\nhttp2:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if testing.Verbose() {
		t.Logf("results:\n  %s", strings.Join(got, "\n  "))
	}
}

// awaitServing calls until the server answers: across nodes the interest
// in new scopes takes a moment to spread.
func awaitServing(t *testing.T, conn grpc.ClientConnInterface) {
	t.Helper()
	c := pb.NewEchoClient(conn)
	testutil.WaitFor(t, clienttest.ClusterTimeout, "server reachable", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := c.Unary(ctx, &pb.EchoRequest{Text: "ping"})
		return err == nil
	})
}

func TestCallsEmbedded(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	bus := embeddedBus(t, 0, nodes)
	startBusServer(t, bus, newEchoServer(), testConfig())
	conn := busConn(t, bus, testConfig())
	compare(t, conn)
}

func TestCallsAcrossNodes(t *testing.T) {
	nodes := clienttest.StartNodes(t, 2)
	startBusServer(t, embeddedBus(t, 1, nodes), newEchoServer(), testConfig())
	conn := busConn(t, embeddedBus(t, 0, nodes), testConfig())
	awaitServing(t, conn)
	compare(t, conn)
}

func TestCallsOverSocket(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	startBusServer(t, dialBus(t, "socket://"+nodes[0].SocketAddr().String()), newEchoServer(), testConfig())
	conn := busConn(t, dialBus(t, "socket://"+nodes[0].SocketAddr().String()), testConfig())
	awaitServing(t, conn)
	compare(t, conn)
}
