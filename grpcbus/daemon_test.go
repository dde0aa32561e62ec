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
// service on, as a server process of its own.
const serveEnv = "GRPCBUS_TEST_SERVE"

func TestMain(m *testing.M) {
	if uri := os.Getenv(serveEnv); uri != "" {
		if err := serveProcess(uri); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		select {} // serves until killed
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

// startServerProcess runs this test binary as a server process on uri.
func startServerProcess(t *testing.T, uri string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"="+uri)
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
