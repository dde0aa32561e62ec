package grpcbus

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	pb "github.com/rsbd/rsbd/proto/grpcbustestpb"
)

// serveEnv names the socket URI a re-executed test binary serves the echo
// service on, as a server process of its own; callEnv the one it makes a
// unary call on that blocks for a minute, as a caller process.
const (
	serveEnv = "GRPCBUS_TEST_SERVE"
	callEnv  = "GRPCBUS_TEST_CALL"
)

func TestMain(m *testing.M) {
	if uri := os.Getenv(serveEnv); uri != "" {
		if err := serveProcess(uri); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		select {} // serves until killed
	}
	if uri := os.Getenv(callEnv); uri != "" {
		fmt.Fprintln(os.Stderr, callProcess(uri)) // the call blocks until killed
		os.Exit(1)
	}
	code := m.Run()
	testutil.RemoveBinaries()
	os.Exit(code)
}

// serveProcess serves the echo service over the socket transport at uri.
func serveProcess(uri string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bus, err := client.Dial(ctx, uri)
	if err != nil {
		return err
	}
	cfg := DefaultConfig() // no test logger: flags are not parsed here
	cfg.PingInterval, cfg.PingTimeout = testConfig().PingInterval, testConfig().PingTimeout
	srv, err := NewServer(bus, WithConfig(cfg), WithUnaryServerInterceptor(serverUnaryInt),
		WithStreamServerInterceptor(serverStreamInt))
	if err != nil {
		return err
	}
	pb.RegisterEchoServer(srv, newEchoServer())
	return srv.Start()
}

// callProcess makes, over the socket transport at uri, a unary call whose
// handler waits a minute.
func callProcess(uri string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bus, err := client.Dial(ctx, uri)
	if err != nil {
		return err
	}
	cfg := DefaultConfig()
	cfg.PingInterval, cfg.PingTimeout = testConfig().PingInterval, testConfig().PingTimeout
	conn, err := NewClientConn(bus, WithConfig(cfg))
	if err != nil {
		return err
	}
	_, err = pb.NewEchoClient(conn).Unary(context.Background(), &pb.EchoRequest{Text: "blocked", WaitMs: 60000})
	return err
}

// startServerProcess runs this test binary as a server process on uri.
func startServerProcess(t *testing.T, uri string) *exec.Cmd {
	t.Helper()
	return startProcess(t, serveEnv, uri)
}

// startProcess runs this test binary with env set to uri.
func startProcess(t *testing.T, env, uri string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+uri)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// TestAcrossDaemons calls a server process attached to another rsbd
// daemon, compares with HTTP/2, then kills the server process: an open
// stream fails with UNAVAILABLE within the ping timeout.
func TestAcrossDaemons(t *testing.T) {
	if testing.Short() {
		t.Skip("rsbd processes are not started with -short")
	}
	ds := clienttest.StartDaemons(t, 2)
	server := startServerProcess(t, ds[1].URI())
	cfg := testConfig()
	conn := busConn(t, dialBus(t, ds[0].URI()), cfg)
	awaitServing(t, conn)
	compare(t, conn)

	st, err := pb.NewEchoClient(conn).ServerStream(context.Background(), &pb.EchoRequest{Count: 1, WaitMs: 60000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	unary := blockedUnary(t, conn)
	start := time.Now()
	if err := server.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	limit := cfg.PingTimeout + cfg.PingInterval + time.Second
	_, err = st.Recv()
	took := time.Since(start)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("recv after the server process was killed: %v", err)
	}
	if took > limit {
		t.Errorf("took %v to notice, limit %v", took, limit)
	}
	t.Logf("killed server noticed after %v", took)
	err = <-unary
	took = time.Since(start)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("unary call after the server process was killed: %v", err)
	}
	if took > limit {
		t.Errorf("unary call took %v to notice, limit %v", took, limit)
	}
	t.Logf("killed server noticed by a unary call after %v", took)
}

// TestKilledCallerEndsHandler has a caller process attached to another
// rsbd daemon make a unary call that blocks in its handler, then kills the
// caller: the handler's context is cancelled within the caller's ping
// timeout.
func TestKilledCallerEndsHandler(t *testing.T) {
	if testing.Short() {
		t.Skip("rsbd processes are not started with -short")
	}
	ds := clienttest.StartDaemons(t, 2)
	cfg := testConfig()
	e := newEchoServer()
	startBusServer(t, dialBus(t, ds[1].URI()), e, cfg)
	caller := startProcess(t, callEnv, ds[0].URI())
	testutil.WaitFor(t, 30*time.Second, "handler of the caller process waiting", func() bool { return e.waiting.Load() == 1 })
	start := time.Now()
	if err := caller.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	limit := cfg.PingTimeout + cfg.PingInterval + 2*time.Second
	select {
	case err := <-e.ended:
		if err != context.Canceled {
			t.Errorf("handler's context ended with %v", err)
		}
		t.Logf("killed caller noticed after %v", time.Since(start))
	case <-time.After(limit):
		t.Fatalf("handler of a killed caller still runs after %v", limit)
	}
}
