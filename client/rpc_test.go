package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
)

// addEcho registers the test methods on s: echo (returns its argument),
// fail (error reply), add1 (int64 + 1) and void.
func addEcho(t testing.TB, s *LocalServer, calls *atomic.Int64) {
	t.Helper()
	methods := map[string]Callback{
		"echo": func(_ context.Context, req *Event) (any, error) { calls.Add(1); return req.Payload, nil },
		"fail": func(_ context.Context, req *Event) (any, error) {
			return nil, fmt.Errorf("cannot do %v", req.Payload)
		},
		"add1": func(_ context.Context, req *Event) (any, error) {
			n, ok := req.Payload.(int64)
			if !ok {
				return nil, fmt.Errorf("want int64, got %T", req.Payload)
			}
			return n + 1, nil
		},
		"void":  func(context.Context, *Event) (any, error) { return nil, nil },
		"panic": func(context.Context, *Event) (any, error) { panic("kaput") },
	}
	for name, fn := range methods {
		if err := s.AddMethod(name, fn); err != nil {
			t.Fatal(err)
		}
	}
}

// rpcPair returns a LocalServer on one node and a RemoteServer on the other
// with routes both ways.
func rpcPair(t testing.TB, sa, sb *Bus, sc string, calls *atomic.Int64) *RemoteServer {
	t.Helper()
	toB := awaitRouteReader(t, sa, sb, mustScope(sc))
	toA := awaitRouteReader(t, sb, sa, mustScope(sc))
	ls, err := sb.NewLocalServer(mustScope(sc))
	if err != nil {
		t.Fatal(err)
	}
	addEcho(t, ls, calls)
	rs, err := sa.NewRemoteServer(mustScope(sc))
	if err != nil {
		t.Fatal(err)
	}
	// The route readers' interest covered the servers' until the daemon
	// learnt theirs; open, they would take (and drop) every request.
	toB.Close()
	toA.Close()
	return rs
}

// TestRPC calls across nodes: results, error replies, panics, bad methods.
func TestRPC(t *testing.T) {
	forEnvs(t, 2, func(t *testing.T, e env) {
		var calls atomic.Int64
		rs := rpcPair(t, e.connect(t, 0), e.connect(t, 1), "/rpc/"+e.name, &calls)
		ctx, cancel := context.WithTimeout(bg(), 10*time.Second)
		defer cancel()
		if got, err := rs.Call(ctx, "echo", "hi"); err != nil || got != "hi" {
			t.Fatalf("echo: %v %v", got, err)
		}
		if got, err := rs.Call(ctx, "add1", int64(41)); err != nil || got != int64(42) {
			t.Fatalf("add1: %v %v", got, err)
		}
		if got, err := rs.Call(ctx, "void", nil); err != nil || got != struct{}{} {
			t.Fatalf("void: %v %v", got, err)
		}
		_, err := rs.Call(ctx, "fail", "magic")
		var re *RemoteError
		if !errors.Is(err, ErrRemote) || !errors.As(err, &re) || re.Message != "cannot do magic" || re.Method != "fail" {
			t.Fatalf("fail: %v", err)
		}
		if _, err := rs.Call(ctx, "panic", nil); !errors.As(err, &re) || !strings.Contains(re.Message, "kaput") {
			t.Fatalf("panic: %v", err)
		}
		if _, err := rs.Call(ctx, "add1", "x"); !errors.As(err, &re) || !strings.Contains(re.Message, "want int64") {
			t.Fatalf("add1 with string: %v", err)
		}
		if _, err := rs.Call(ctx, "not/one", nil); !errors.Is(err, ErrConfig) {
			t.Fatalf("bad method name: %v", err)
		}
		rep, err := rs.CallEvent(ctx, "echo", int64(3))
		if err != nil || rep.Method != MethodReply || len(rep.Causes) != 1 || rep.Causes[0].SenderID != rs.requester.ID() {
			t.Fatalf("reply event %+v %v", rep, err)
		}
	})
}

// TestRPCTimeout calls a method nobody serves.
func TestRPCTimeout(t *testing.T) {
	forEnvs(t, 1, func(t *testing.T, e env) {
		b := e.connect(t, 0)
		rs, err := b.NewRemoteServer(mustScope("/nobody/"), WithCallTimeout(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = rs.Call(bg(), "m", nil)
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("call without server: %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d < 100*time.Millisecond || d > 5*time.Second {
			t.Fatalf("timed out after %v", d)
		}
		ctx, cancel := context.WithCancel(bg())
		cancel()
		if _, err := rs.Call(ctx, "m", nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call: %v", err)
		}
	})
}

// TestRPCSeveralServers has two servers answer; the caller takes the first
// reply and ignores the second.
func TestRPCSeveralServers(t *testing.T) {
	forEnvs(t, 2, func(t *testing.T, e env) {
		a, b := e.connect(t, 0), e.connect(t, 1)
		sc := "/multi/" + e.name
		var calls atomic.Int64
		rs := rpcPair(t, a, b, sc, &calls)
		local, err := a.NewLocalServer(mustScope(sc))
		if err != nil {
			t.Fatal(err)
		}
		addEcho(t, local, &calls)
		for i := range 5 {
			ctx, cancel := context.WithTimeout(bg(), 10*time.Second)
			got, err := rs.Call(ctx, "echo", int64(i))
			cancel()
			if err != nil || got != int64(i) {
				t.Fatalf("call %d: %v %v", i, got, err)
			}
		}
		testutil.WaitFor(t, 10*time.Second, "both servers answered every call", func() bool { return calls.Load() == 10 })
		rs.mu.Lock()
		pending := len(rs.pending)
		rs.mu.Unlock()
		if pending != 0 {
			t.Fatalf("%d calls still pending", pending)
		}
	})
}
