package grpcbus

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/rttstat"
	pb "github.com/rsbd/rsbd/proto/grpcbustestpb"
)

// transports returns, in one run, the ways a benchmark reaches the echo
// service: over the bus (a node embedded in the process, and over the
// socket transport of an in-process node) and with grpc-go over HTTP/2 on
// loopback.
func transports(b *testing.B) []struct {
	name string
	conn grpc.ClientConnInterface
} {
	nodes := clienttest.StartNodes(b, 1)
	cfg := DefaultConfig()
	cfg.Logger = clienttest.Logger()
	emb := embeddedBus(b, 0, nodes)
	startBusServer(b, emb, newEchoServer(), cfg)
	sockURI := "socket://" + nodes[0].SocketAddr().String()
	sockCfg := cfg
	sockCfg.Prefix = "/grpc-socket/"
	startBusServer(b, dialBus(b, sockURI), newEchoServer(), sockCfg)
	return []struct {
		name string
		conn grpc.ClientConnInterface
	}{
		{"bus-embedded", busConn(b, emb, cfg)},
		{"bus-socket", busConn(b, dialBus(b, sockURI), sockCfg)},
		{"http2", startHTTP2(b, newEchoServer())},
	}
}

var benchSizes = []int{64, 1024}

// BenchmarkUnaryRTT measures unary round trips one at a time: p50-µs and
// p99-µs.
func BenchmarkUnaryRTT(b *testing.B) {
	for _, tr := range transports(b) {
		c := pb.NewEchoClient(tr.conn)
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%dB", tr.name, size), func(b *testing.B) {
				req := &pb.EchoRequest{Pad: make([]byte, size)}
				ctx := context.Background()
				if _, err := c.Unary(ctx, req); err != nil {
					b.Fatal(err)
				}
				rtts := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for range b.N {
					start := time.Now()
					if _, err := c.Unary(ctx, req); err != nil {
						b.Fatal(err)
					}
					rtts = append(rtts, time.Since(start))
				}
				b.StopTimer()
				rttstat.Report(b, rtts)
			})
		}
	}
}

// BenchmarkServerStream measures a server stream's throughput: msgs/s.
func BenchmarkServerStream(b *testing.B) {
	for _, tr := range transports(b) {
		c := pb.NewEchoClient(tr.conn)
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%dB", tr.name, size), func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				start := time.Now()
				st, err := c.ServerStream(ctx, &pb.EchoRequest{Count: int32(b.N), Pad: make([]byte, size)})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					_, err := st.Recv()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != b.N {
					b.Fatalf("got %d of %d", n, b.N)
				}
				b.ReportMetric(float64(n)/time.Since(start).Seconds(), "msgs/s")
			})
		}
	}
}
