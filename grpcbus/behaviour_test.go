package grpcbus

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/proto/grpcbuspb"
	pb "github.com/rsbd/rsbd/proto/grpcbustestpb"
)

// counter sums the samples of a counter family on reg whose labels
// include the given name=value pairs.
func counter(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m.GetLabel(), labels) {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

func hasLabels(have []*dtoLabel, want []string) bool {
	for i := 0; i+1 < len(want); i += 2 {
		if !slices.ContainsFunc(have, func(l *dtoLabel) bool { return l.GetName() == want[i] && l.GetValue() == want[i+1] }) {
			return false
		}
	}
	return true
}

// ended waits for the handler's context error.
func ended(t *testing.T, e *echoServer) error {
	t.Helper()
	select {
	case err := <-e.ended:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's context did not end")
		return nil
	}
}

func TestJSONWireFormat(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	bus := embeddedBus(t, 0, nodes)
	startBusServer(t, bus, newEchoServer(), testConfig())
	want := runAll(t, busConn(t, bus, testConfig()))
	cfg := testConfig()
	cfg.WireFormat = WireJSON
	if got := runAll(t, busConn(t, bus, cfg)); !slices.Equal(got, want) {
		t.Errorf("json differs from proto:\n%v\n%v", got, want)
	}
	only := testConfig()
	only.Prefix, only.WireFormats = "/grpc-proto-only/", []string{WireProto}
	startBusServer(t, bus, newEchoServer(), only)
	cfg.Prefix = only.Prefix
	c := pb.NewEchoClient(busConn(t, bus, cfg))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Unary(ctx, &pb.EchoRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("json to a proto-only server: %v, want Unimplemented", err)
	}
	st, _ := c.Bidi(ctx)
	if st != nil {
		t.Errorf("json stream to a proto-only server opened")
	}
}

func TestCancellationAndDeadlineReachHandler(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	bus := embeddedBus(t, 0, nodes)
	e := newEchoServer()
	startBusServer(t, bus, e, testConfig())
	c := pb.NewEchoClient(busConn(t, bus, testConfig()))

	t.Run("unary deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := c.Unary(ctx, &pb.EchoRequest{WaitMs: 10000})
		if status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("call: %v", err)
		}
		if err := ended(t, e); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("handler: %v, want deadline exceeded", err)
		}
	})
	t.Run("unary cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		before := e.waiting.Load()
		go func() { _, err := c.Unary(ctx, &pb.EchoRequest{WaitMs: 10000}); done <- err }()
		testutil.WaitFor(t, 5*time.Second, "handler waiting", func() bool { return e.waiting.Load() > before })
		cancel()
		if err := <-done; status.Code(err) != codes.Canceled {
			t.Errorf("call: %v", err)
		}
		if err := ended(t, e); !errors.Is(err, context.Canceled) {
			t.Errorf("handler: %v, want canceled", err)
		}
	})
	t.Run("stream cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		st, err := c.Bidi(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Send(&pb.EchoRequest{Text: "x"}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Recv(); err != nil {
			t.Fatal(err)
		}
		cancel()
		if _, err := st.Recv(); status.Code(err) != codes.Canceled {
			t.Errorf("recv after cancel: %v", err)
		}
		if err := ended(t, e); !errors.Is(err, context.Canceled) {
			t.Errorf("handler: %v, want canceled", err)
		}
	})
	t.Run("stream deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		st, err := c.ServerStream(ctx, &pb.EchoRequest{Count: 1, WaitMs: 10000})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := drain(st.Recv); status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("stream: %v", err)
		}
		if err := ended(t, e); err == nil {
			t.Errorf("handler context did not end")
		}
	})
}

func TestPingsKeepQuietStreamsOpen(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	bus := embeddedBus(t, 0, nodes)
	cfg := testConfig()
	startBusServer(t, bus, newEchoServer(), cfg)
	c := pb.NewEchoClient(busConn(t, bus, cfg))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	quiet := int32(3 * cfg.PingTimeout / time.Millisecond)
	st, err := c.ServerStream(ctx, &pb.EchoRequest{Text: "q", Count: 1, WaitMs: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := drain(st.Recv); err != nil || len(got) != 1 {
		t.Errorf("quiet stream: %v %v", got, err)
	}
}

func TestServerGoneIsUnavailable(t *testing.T) {
	nodes := clienttest.StartNodes(t, 2)
	cfg := testConfig()
	startBusServer(t, embeddedBus(t, 1, nodes), newEchoServer(), cfg)
	conn := busConn(t, embeddedBus(t, 0, nodes), cfg)
	awaitServing(t, conn)
	st, err := pb.NewEchoClient(conn).ServerStream(context.Background(), &pb.EchoRequest{Count: 1, WaitMs: 60000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	nodes[1].Close()
	m, err := st.Recv()
	took := time.Since(start)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("recv after the server's node closed: %v %v", m, err)
	}
	if limit := cfg.PingTimeout + cfg.PingInterval + time.Second; took > limit {
		t.Errorf("took %v to notice, limit %v", took, limit)
	}
}

func TestClientGoneEndsHandler(t *testing.T) {
	nodes := clienttest.StartNodes(t, 2)
	cfg := testConfig()
	e := newEchoServer()
	startBusServer(t, embeddedBus(t, 1, nodes), e, cfg)
	conn := busConn(t, embeddedBus(t, 0, nodes), cfg)
	awaitServing(t, conn)
	st, err := pb.NewEchoClient(conn).Bidi(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&pb.EchoRequest{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	nodes[0].Close()
	if err := ended(t, e); !errors.Is(err, context.Canceled) {
		t.Errorf("handler: %v", err)
	}
}

func TestStreamLimit(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	bus := embeddedBus(t, 0, nodes)
	cfg := testConfig()
	cfg.MaxStreams = 2
	startBusServer(t, bus, newEchoServer(), cfg)
	c := pb.NewEchoClient(busConn(t, bus, testConfig()))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 2 {
		if _, err := c.Bidi(ctx); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
	}
	if _, err := c.Bidi(ctx); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("third stream: %v, want ResourceExhausted", err)
	}
}

func TestUnknownStreamFramesDropped(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	bus := embeddedBus(t, 0, nodes)
	reg := prometheus.NewRegistry()
	cfg := testConfig()
	cfg.Registerer = reg
	srv := startBusServer(t, bus, newEchoServer(), cfg)
	conn := busConn(t, bus, cfg)
	fr := &grpcbuspb.TransportFrame{StreamId: 999, Frame: &grpcbuspb.TransportFrame_Message{Message: &grpcbuspb.Message{}}}
	if err := conn.ep.sendFrame(context.Background(), srv.ep.scope, WireProto, fr, nil); err != nil {
		t.Fatal(err)
	}
	if err := conn.ep.pub.PublishEvent(context.Background(), rawFrame(srv, []byte{0xff, 0xff})); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "drops counted", func() bool {
		return counter(t, reg, "rsbd_grpc_frames_dropped_total", "side", "server", "reason", dropUnknownStream) == 1 &&
			counter(t, reg, "rsbd_grpc_frames_dropped_total", "side", "server", "reason", dropMalformed) == 1
	})
}

func TestMetricsCountCalls(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	bus := embeddedBus(t, 0, nodes)
	reg := prometheus.NewRegistry()
	cfg := testConfig()
	cfg.Registerer = reg
	startBusServer(t, bus, newEchoServer(), cfg)
	c := pb.NewEchoClient(busConn(t, bus, cfg))
	_, _ = c.Unary(context.Background(), &pb.EchoRequest{})
	_, _ = c.Unary(context.Background(), &pb.EchoRequest{FailCode: int32(codes.NotFound)})
	m := "/rsbd.grpcbustest.Echo/Unary"
	for _, side := range []string{"client", "server"} {
		for code, want := range map[string]float64{"OK": 1, "NotFound": 1} {
			if got := counter(t, reg, "rsbd_grpc_calls_total", "side", side, "method", m, "code", code); got != want {
				t.Errorf("%s %s: %v calls, want %v", side, code, got, want)
			}
		}
	}
	if got := counter(t, reg, "rsbd_grpc_open_streams"); got != 0 {
		t.Errorf("open streams %v", got)
	}
}

func TestCallLimit(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	bus := embeddedBus(t, 0, nodes)
	cfg := testConfig()
	cfg.MaxCalls = 1
	srv := startBusServer(t, bus, newEchoServer(), cfg)
	c := pb.NewEchoClient(busConn(t, bus, testConfig()))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _, _ = c.Unary(ctx, &pb.EchoRequest{WaitMs: 10000}) }()
	testutil.WaitFor(t, 5*time.Second, "call running", func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.calls) == 1
	})
	if _, err := c.Unary(ctx, &pb.EchoRequest{}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("second call: %v, want ResourceExhausted", err)
	}
}

func TestStopAndClose(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	bus := embeddedBus(t, 0, nodes)
	e := newEchoServer()
	srv := startBusServer(t, bus, e, testConfig())
	conn := busConn(t, bus, testConfig())
	c := pb.NewEchoClient(conn)
	open := func() pb.Echo_BidiClient {
		st, err := c.Bidi(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Send(&pb.EchoRequest{}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Recv(); err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	conn.Close()
	if _, err := st.Recv(); status.Code(err) != codes.Canceled {
		t.Errorf("after ClientConn.Close: %v, want Canceled", err)
	}
	if err := ended(t, e); !errors.Is(err, context.Canceled) {
		t.Errorf("handler after ClientConn.Close: %v", err)
	}
	c = pb.NewEchoClient(busConn(t, bus, testConfig()))
	st = open()
	srv.Stop()
	if _, err := st.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("after Server.Stop: %v, want Unavailable", err)
	}
}
