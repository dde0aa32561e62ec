package node

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
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
	c, err := sockclient.Dial(ctx, n.SocketAddr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	scopes := make([]scope.Scope, k)
	for i := range scopes {
		scopes[i] = scope.MustParse(fmt.Sprintf("/bench/sc/%05d/%05d/", k, i)) // one length for every k
		defer n.Subscribe(scopes[i], func(ev *notification.Event) { count(ev.Data) }, WithoutRetention())()
	}
	ev := testutil.Event("/", 1, make([]byte, 64))
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

// BenchmarkScaleListeners is the listener path of the scaling benchmark in
// one process: socket clients announce k listeners on distinct scopes over
// conns connections (an introspection Hello each, listener i on connection
// i mod conns) and another client publishes 64-byte events round-robin
// over those scopes, 128 frames per write, through the node's socket
// server. One op is one event received.
func BenchmarkScaleListeners(b *testing.B) {
	for _, c := range []struct{ k, conns int }{{1, 1}, {100, 1}, {1000, 1}, {1000, 10}} {
		b.Run(fmt.Sprintf("listeners=%d/conns=%d", c.k, c.conns), func(b *testing.B) { benchScaleListeners(b, c.k, c.conns) })
	}
}

func benchScaleListeners(b *testing.B, k, conns int) {
	n := startNodes(b, 1, nil)[0]
	scopes := make([]scope.Scope, k)
	hellos := make([][][]byte, conns)
	for i := range scopes {
		scopes[i] = scope.MustParse(fmt.Sprintf("/bench/li/%05d/%05d/", k, i)) // one length for every k
		hellos[i%conns] = append(hellos[i%conns], helloBody(b, i, scopes[i].String()))
	}
	var got atomic.Int64
	done := make(chan error, conns)
	subs := make([]*sockclient.ClientConn, conns)
	for i := range subs {
		subs[i] = dialSocket(b, n)
		if err := subs[i].SendMany(hellos[i]); err != nil {
			b.Fatal(err)
		}
		go countFrames(subs[i], &got, done)
	}
	testutil.WaitFor(b, 10*time.Second, "every listener", func() bool {
		in := n.SocketInterest() // the listeners' scopes and introspection's
		return !in.All && len(in.Scopes) == k+1
	})
	// Dialled once the listeners are known: a connection that announced
	// none wants everything.
	pub := dialSocket(b, n)
	ev := testutil.Event("/", 1, make([]byte, 64))
	b.ResetTimer()
	err := sendBatched(pub, ev, b.N, 128, func(i int, ev *notification.Event) {
		ev.Scope = scopes[i%k]
		ev.ID.SequenceNumber = uint32(i)
	})
	if err != nil {
		b.Fatal(err)
	}
	testutil.WaitFor(b, time.Minute, "every event", func() bool { return got.Load() >= int64(b.N) })
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	for _, c := range subs {
		_ = c.Close()
		<-done
	}
}
