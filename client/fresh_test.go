package client

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestFreshCallerAcrossNodes: a RemoteServer created and called at once, on
// another node than its server, gets its reply on the first try, again and
// again. It relies on the daemon's interest barrier: the caller's Hello
// (its reply listener) is confirmed by every peer before the request goes
// out, so the reply is sent to the caller's node.
func TestFreshCallerAcrossNodes(t *testing.T) {
	forEnvs(t, 2, func(t *testing.T, e env) {
		server, caller := e.connect(t, 0), e.connect(t, 1)
		sc := mustScope("/fresh/" + e.name)
		ls, err := server.NewLocalServer(sc)
		if err != nil {
			t.Fatal(err)
		}
		var calls atomic.Int64
		addEcho(t, ls, &calls)
		awaitRoute(t, caller, server, sc) // the server's listener is known on the caller's node
		for i := 0; i < 20; i++ {
			rs, err := caller.NewRemoteServer(sc)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(bg(), 5*time.Second)
			got, err := rs.Call(ctx, "echo", fmt.Sprint(i))
			cancel()
			rs.Close()
			if err != nil || got != fmt.Sprint(i) {
				t.Fatalf("call %d of a fresh caller: %v %v", i, got, err)
			}
		}
	})
}
