package node

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/scope"
)

// BenchmarkScaleScopes is the daemon path of the scaling benchmark in one
// process: a node with its socket server holds k embedded subscriptions on
// distinct scopes (each with a closure of its own, as an application's
// wrapper makes them) and a socket client publishes 64-byte events
// round-robin over the scopes. One op is one event delivered. The client
// connects first and sends no Hello, so it wants every scope, as in the
// scaling benchmark (the interest stays the root scope while subscribing).
func BenchmarkScaleScopes(b *testing.B) {
	for _, k := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("scopes=%d", k), func(b *testing.B) { benchScaleScopes(b, k) })
	}
}

func benchScaleScopes(b *testing.B, k int) {
	n := startNodes(b, 1, nil)[0]
	var got atomic.Int64
	count := func([]byte) { got.Add(1) }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := rsbsocket.Dial(ctx, n.SocketAddr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	scopes := make([]scope.Scope, k)
	for i := range scopes {
		scopes[i] = scope.MustParse(fmt.Sprintf("/bench/sc/%05d/%05d/", k, i)) // one length for every k
		defer n.Subscribe(scopes[i], func(ev *notification.Event) { count(ev.Data) }, WithoutRetention())()
	}
	ev := testEvent("/", 1, make([]byte, 64))
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	err = sendBatched(c, ev, b.N, 128, func(i int, ev *notification.Event) {
		ev.Scope = scopes[i%k]
		ev.ID.SequenceNumber = uint32(i)
	})
	if err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); got.Load() < int64(b.N); {
		if time.Now().After(deadline) {
			b.Fatalf("delivered %d of %d", got.Load(), b.N)
		}
		runtime.Gosched()
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(ms1.NumGC-ms0.NumGC)*1e6/float64(b.N), "gc/Mmsg")
	b.ReportMetric(float64(ms0.HeapAlloc)/1e6, "live-MB")
}
