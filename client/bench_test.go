package client

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/rttstat"

	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/node"
)

// mode names how a benchmark Bus reaches its in-process node.
type mode string

const (
	modeSocket   mode = "socket"
	modeEmbedded mode = "embedded"
	modeDaemon   mode = "rsbd" // rsbd processes, over the socket protocol
)

// benchBuses returns a publishing and a receiving Bus: both on one node, or
// on two nodes of a cluster.
func benchBuses(b *testing.B, m mode, nodesN int) (*Bus, *Bus) {
	if m == modeDaemon {
		ds := clienttest.StartDaemons(b, nodesN)
		return dialNode(b, ds[0].URI()), dialNode(b, ds[len(ds)-1].URI())
	}
	nodes := clienttest.StartNodes(b, nodesN)
	bus := func(n *node.Node) *Bus {
		if m == modeSocket {
			return dialNode(b, n.SocketAddr().String())
		}
		bus, err := EmbeddedConfig(n, Config{Logger: testLogger()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { bus.Close() })
		return bus
	}
	return bus(nodes[0]), bus(nodes[len(nodes)-1])
}

// BenchmarkRPCRoundTrip measures call latency through one node: the
// RemoteServer and the LocalServer are separate Buses of the same node.
func BenchmarkRPCRoundTrip(b *testing.B) {
	for _, m := range []mode{modeSocket, modeEmbedded, modeDaemon} {
		b.Run(string(m), func(b *testing.B) {
			caller, callee := benchBuses(b, m, 1)
			var calls atomic.Int64
			rs := rpcPair(b, caller, callee, "/bench/rpc", &calls)
			benchCalls(b, rs)
		})
	}
}

func benchCalls(b *testing.B, rs *RemoteServer) {
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := rs.Call(ctx, "echo", int64(i)); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	rttstat.Report(b, lat)
}

// BenchmarkInformerListener measures events/s from an informer to a
// listener on another Bus, in windows of 256 events so that no queue
// overflows: over one node, and across two nodes (UDP between them).
func BenchmarkInformerListener(b *testing.B) {
	for _, tc := range []struct {
		name   string
		m      mode
		nodes  int
		borrow bool // the listener WithoutRetention
	}{{"socket/one-node", modeSocket, 1, false}, {"socket/one-node/without-retention", modeSocket, 1, true},
		{"socket/two-nodes", modeSocket, 2, false}, {"embedded/two-nodes", modeEmbedded, 2, false},
		{"rsbd/one-daemon", modeDaemon, 1, false}, {"rsbd/one-daemon/without-retention", modeDaemon, 1, true},
		{"rsbd/two-daemons", modeDaemon, 2, false}} {
		b.Run(tc.name, func(b *testing.B) {
			pub, sub := benchBuses(b, tc.m, tc.nodes)
			sc := mustScope("/bench/stream")
			rd := awaitRouteReader(b, pub, sub, sc)
			opts := []Option{WithFilter(MethodFilter("")), WithQueue(4096, DropNewest)}
			if tc.borrow {
				opts = append(opts, WithoutRetention())
			}
			l, err := sub.NewListener(sc, opts...)
			if err != nil {
				b.Fatal(err)
			}
			rd.Close() // the listener holds the interest now
			c := newCounter()
			l.AddHandler(func(*Event) error { c.add(); return nil })
			inf, _ := pub.NewInformer(sc)
			payload := make([]byte, 100)
			const window = 256
			b.SetBytes(int64(len(payload)))
			b.ResetTimer()
			start := time.Now()
			sent := 0
			for b.Loop() {
				if _, err := inf.Publish(context.Background(), payload); err != nil {
					b.Fatal(err)
				}
				sent++
				if sent%window == 0 {
					c.wait(b, int64(sent-window/2))
				}
			}
			c.wait(b, int64(sent))
			b.ReportMetric(float64(sent)/time.Since(start).Seconds(), "events/s")
		})
	}
}

// BenchmarkPublish measures the publishing side alone: an Informer on a
// Bus connected to an rsbd process publishes 64-byte payloads that nobody
// listens to (the daemon drops them), converted by the registry as any
// payload is. One op is one Publish; the sender's writer runs beside it.
func BenchmarkPublish(b *testing.B) {
	// One bus on the daemon: a second one, with no listener announced,
	// would want every scope and decode every event in this process.
	pub := dialNode(b, clienttest.StartDaemons(b, 1)[0].URI())
	inf, err := pub.NewInformer(mustScope("/bench/publish/"))
	if err != nil {
		b.Fatal(err)
	}
	var payload any = make([]byte, 64) // converted once, as a caller's value
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		if _, err := inf.Publish(context.Background(), payload); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time says more than wall time on a busy machine: the publisher,
	// its writer and the daemon share the CPUs.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the CPU time, user and system, the test process has
// used, in nanoseconds.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// counter counts handled events and wakes a waiter at a target.
type counter struct {
	got, target atomic.Int64
	reached     chan struct{}
}

func newCounter() *counter { return &counter{reached: make(chan struct{}, 1)} }

func (c *counter) add() {
	if c.got.Add(1) >= c.target.Load() {
		select {
		case c.reached <- struct{}{}:
		default:
		}
	}
}

// wait waits until n events were handled.
func (c *counter) wait(b *testing.B, n int64) {
	c.target.Store(n)
	timeout := time.After(20 * time.Second)
	for c.got.Load() < n {
		select {
		case <-c.reached:
		case <-timeout:
			b.Fatalf("only %d of %d events arrived", c.got.Load(), n)
		}
	}
}

// waitFirst waits up to d for a first event.
func (c *counter) waitFirst(d time.Duration) {
	c.target.Store(1)
	t := time.NewTimer(d)
	defer t.Stop()
	for c.got.Load() == 0 {
		select {
		case <-c.reached:
		case <-t.C:
			return
		}
	}
}

// BenchmarkManyListeners measures events/s from one Bus to another Bus
// holding n listeners on distinct scopes, all over one socket link to one
// node, the events round-robin over the listeners' scopes, in windows of
// 256 events.
func BenchmarkManyListeners(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("listeners=%d", n), func(b *testing.B) {
			pub, sub := benchBuses(b, modeSocket, 1)
			c := newCounter()
			infs := make([]*Informer, n)
			for i := range infs {
				sc := mustScope(fmt.Sprintf("/bench/many/%04d/", i))
				l, err := sub.NewListener(sc, WithQueue(4096, DropNewest))
				if err != nil {
					b.Fatal(err)
				}
				l.AddHandler(func(*Event) error { c.add(); return nil })
				if infs[i], err = pub.NewInformer(sc); err != nil {
					b.Fatal(err)
				}
			}
			payload := make([]byte, 100)
			// The daemon learns the listeners' interest from their Hellos:
			// publish on the last scope until an event arrives.
			for deadline := time.Now().Add(20 * time.Second); c.got.Load() == 0; {
				if time.Now().After(deadline) {
					b.Fatal("no route to the listeners")
				}
				if _, err := infs[n-1].Publish(context.Background(), payload); err != nil {
					b.Fatal(err)
				}
				c.waitFirst(10 * time.Millisecond)
			}
			const window = 256
			base := c.got.Load()
			b.SetBytes(int64(len(payload)))
			b.ResetTimer()
			start := time.Now()
			sent := 0
			for b.Loop() {
				if _, err := infs[sent%n].Publish(context.Background(), payload); err != nil {
					b.Fatal(err)
				}
				sent++
				if sent%window == 0 {
					c.wait(b, base+int64(sent-window/2))
				}
			}
			c.wait(b, base+int64(sent))
			b.ReportMetric(float64(sent)/time.Since(start).Seconds(), "events/s")
		})
	}
}
