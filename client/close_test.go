package client

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/leakcheck"
	"github.com/rsbd/rsbd/internal/testutil"
)

// TestCloseLeavesNoGoroutines: buses that ran a listener, a reader, an
// informer and an RPC pair, then were closed, leave no goroutine behind in
// the program (the nodes they used keep running).
func TestCloseLeavesNoGoroutines(t *testing.T) {
	forEnvs(t, 2, func(t *testing.T, e env) {
		before := runtime.NumGoroutine()
		sa, sb := e.connect(t, 0), e.connect(t, 1)
		var calls atomic.Int64
		rs := rpcPair(t, sa, sb, "/leak/"+e.name, &calls)
		ctx, cancel := context.WithTimeout(bg(), 10*time.Second)
		defer cancel()
		if got, err := rs.Call(ctx, "echo", "hi"); err != nil || got != "hi" {
			t.Fatalf("echo: %v %v", got, err)
		}
		l, err := sb.NewListener(mustScope("/leak/ev/"))
		if err != nil {
			t.Fatal(err)
		}
		var heard atomic.Int64
		l.AddHandler(func(*Event) error { heard.Add(1); return nil })
		rd, err := sb.NewReader(mustScope("/leak/ev/"))
		if err != nil {
			t.Fatal(err)
		}
		awaitRoute(t, sa, sb, mustScope("/leak/ev/"))
		inf, err := sa.NewInformer(mustScope("/leak/ev/"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inf.Publish(ctx, "x"); err != nil {
			t.Fatal(err)
		}
		if _, err := rd.Read(ctx); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 10*time.Second, "the listener's event", func() bool { return heard.Load() >= 1 })
		_ = sa.Close()
		_ = sb.Close()
		leakcheck.Wait(t, before, 15*time.Second)
	})
}
