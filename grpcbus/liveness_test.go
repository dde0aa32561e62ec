package grpcbus

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	pb "github.com/rsbd/rsbd/proto/grpcbustestpb"
)

// acked returns the unary calls of conn a server has acknowledged.
func acked(conn *ClientConn) int {
	conn.mu.Lock()
	defer conn.mu.Unlock()
	n := 0
	for _, cl := range conn.pending {
		if cl.peer != "" {
			n++
		}
	}
	return n
}

// blockedUnary starts a unary call whose handler waits a minute and
// returns once its server acknowledged it; the call's error arrives on the
// channel.
func blockedUnary(t *testing.T, conn *ClientConn) <-chan error {
	t.Helper()
	before := acked(conn)
	errc := make(chan error, 1)
	go func() {
		_, err := pb.NewEchoClient(conn).Unary(context.Background(), &pb.EchoRequest{Text: "blocked", WaitMs: 60000})
		errc <- err
	}()
	testutil.WaitFor(t, 10*time.Second, "unary call acknowledged", func() bool { return acked(conn) > before })
	return errc
}

// TestUnaryServerGoneIsUnavailable closes the node of a server whose unary
// handler is blocked: the caller gets UNAVAILABLE within the ping timeout.
func TestUnaryServerGoneIsUnavailable(t *testing.T) {
	nodes := clienttest.StartNodes(t, 2)
	cfg := testConfig()
	startBusServer(t, embeddedBus(t, 1, nodes), newEchoServer(), cfg)
	conn := busConn(t, embeddedBus(t, 0, nodes), cfg)
	awaitServing(t, conn)
	unary := blockedUnary(t, conn)
	start := time.Now()
	nodes[1].Close()
	err := <-unary
	took := time.Since(start)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("unary call after the server's node closed: %v", err)
	}
	if limit := cfg.PingTimeout + cfg.PingInterval + time.Second; took > limit {
		t.Errorf("took %v to notice, limit %v", took, limit)
	}
}

// TestUnaryNobodyServes calls a service nobody serves: UNAVAILABLE once the
// acknowledgement timeout passes, long before the deadline.
func TestUnaryNobodyServes(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	cfg := testConfig()
	cfg.AckTimeout = 300 * time.Millisecond
	conn := busConn(t, embeddedBus(t, 0, nodes), cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := pb.NewEchoClient(conn).Unary(ctx, &pb.EchoRequest{Text: "anyone?"})
	took := time.Since(start)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("call to a service nobody serves: %v", err)
	}
	if took < cfg.AckTimeout || took > cfg.AckTimeout+time.Second {
		t.Errorf("failed after %v; ack timeout %v", took, cfg.AckTimeout)
	}
	if !strings.Contains(status.Convert(err).Message(), ErrNoServer.Error()) {
		t.Errorf("status does not name ErrNoServer: %v", err)
	}
}

// TestLongUnaryCallKeptAlive runs a unary handler for several ping
// timeouts: pings keep the call alive and it succeeds; a call answered
// within a ping interval costs no ping.
func TestLongUnaryCallKeptAlive(t *testing.T) {
	nodes := clienttest.StartNodes(t, 2)
	reg := prometheus.NewRegistry()
	cfg := testConfig()
	srvCfg := cfg
	srvCfg.Registerer = reg
	startBusServer(t, embeddedBus(t, 1, nodes), newEchoServer(), srvCfg)
	conn := busConn(t, embeddedBus(t, 0, nodes), cfg)
	awaitServing(t, conn)
	c := pb.NewEchoClient(conn)
	for range 20 {
		if _, err := c.Unary(context.Background(), &pb.EchoRequest{Text: "fast"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := conn.pingSeq.Load(); n != 0 {
		t.Errorf("fast calls cost %d pings", n)
	}
	wait := 3 * cfg.PingTimeout
	r, err := c.Unary(context.Background(), &pb.EchoRequest{Text: "slow", WaitMs: int32(wait.Milliseconds())})
	if err != nil || r.Text == "" {
		t.Fatalf("call of %v: %v %v", wait, r, err)
	}
	if conn.pingSeq.Load() == 0 {
		t.Error("a long call was not pinged for")
	}
}

// TestStreamNobodyServes opens each kind of stream to a service nobody
// serves: UNAVAILABLE naming ErrNoServer once the open timeout passes,
// long before the deadline, where grpc-go's generated stubs report it.
func TestStreamNobodyServes(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	cfg := testConfig()
	cfg.OpenTimeout = 300 * time.Millisecond
	c := pb.NewEchoClient(busConn(t, embeddedBus(t, 0, nodes), cfg))
	opens := map[string]func(ctx context.Context) error{
		"server": func(ctx context.Context) error {
			st, err := c.ServerStream(ctx, &pb.EchoRequest{Text: "anyone?"})
			if err != nil {
				return err
			}
			_, err = st.Recv()
			return err
		},
		"client": func(ctx context.Context) error { _, err := c.ClientStream(ctx); return err },
		"bidi":   func(ctx context.Context) error { _, err := c.Bidi(ctx); return err },
	}
	for name, open := range opens {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			err := open(ctx)
			took := time.Since(start)
			if status.Code(err) != codes.Unavailable {
				t.Fatalf("stream to a service nobody serves: %v", err)
			}
			if took < cfg.OpenTimeout || took > cfg.OpenTimeout+2*time.Second {
				t.Errorf("failed after %v; open timeout %v", took, cfg.OpenTimeout)
			}
			if !strings.Contains(status.Convert(err).Message(), ErrNoServer.Error()) {
				t.Errorf("status does not name ErrNoServer: %v", err)
			}
		})
	}
}

// TestStreamOpenWaitsForDeadline sets a negative open timeout: a stream
// to a service nobody serves then waits for its deadline.
func TestStreamOpenWaitsForDeadline(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	cfg := testConfig()
	cfg.OpenTimeout = -1
	c := pb.NewEchoClient(busConn(t, embeddedBus(t, 0, nodes), cfg))
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	_, err := c.Bidi(ctx)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("stream without an open timeout: %v", err)
	}
}

// TestVanishedUnaryCaller closes the node of a caller whose unary call is
// blocked in its handler: the caller's pings stop, and the handler's
// context is cancelled within the caller's ping timeout. A call whose
// caller stays keeps running (TestLongUnaryCallKeptAlive).
func TestVanishedUnaryCaller(t *testing.T) {
	nodes := clienttest.StartNodes(t, 2)
	cfg := testConfig()
	reg := prometheus.NewRegistry()
	srvCfg := cfg
	srvCfg.Registerer = reg
	e := newEchoServer()
	startBusServer(t, embeddedBus(t, 1, nodes), e, srvCfg)
	conn := busConn(t, embeddedBus(t, 0, nodes), cfg)
	awaitServing(t, conn)
	blockedUnary(t, conn)
	testutil.WaitFor(t, 10*time.Second, "handler waiting", func() bool { return e.waiting.Load() == 1 })
	// Pings keep the call alive past the ping timeout.
	select {
	case err := <-e.ended:
		t.Fatalf("handler of a live caller ended: %v", err)
	case <-time.After(2 * cfg.PingTimeout):
	}
	start := time.Now()
	nodes[0].Close()
	limit := cfg.PingTimeout + cfg.PingInterval + 2*time.Second
	select {
	case err := <-e.ended:
		took := time.Since(start)
		if err != context.Canceled {
			t.Errorf("handler's context ended with %v", err)
		}
		t.Logf("vanished caller noticed after %v", took)
	case <-time.After(limit):
		t.Fatalf("handler of a vanished caller still runs after %v", limit)
	}
	if n := counter(t, reg, "rsbd_grpc_heartbeats_missed_total"); n < 1 {
		t.Errorf("missed heartbeats %v", n)
	}
}
