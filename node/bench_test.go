package node

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/rttstat"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport"
)

// lossyOpen opens real UDP sockets whose receive path drops a fraction p of
// datagrams (seeded), to measure repair over real multicast.
func lossyOpen(p float64, seed uint64) func(transport.Config, transport.Handler) (transport.Conn, error) {
	return func(c transport.Config, h transport.Handler) (transport.Conn, error) {
		rng := rand.New(rand.NewPCG(seed, seed))
		var keep []transport.Packet
		return transport.Open(c, func(batch []transport.Packet) {
			keep = keep[:0]
			for _, pk := range batch {
				if rng.Float64() >= p {
					keep = append(keep, pk)
				}
			}
			if len(keep) > 0 {
				h(keep)
			}
		})
	}
}

// BenchmarkNetworkThroughput publishes b.N reliable events from one node to a
// subscriber on another over real loopback multicast.
func BenchmarkNetworkThroughput(b *testing.B) {
	for _, size := range []int{64, 1 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			nodes := startNodes(b, 2, func(_ int, c *Config) { c.SocketAddr = "off" })
			a, r := nodes[0], nodes[1]
			var got atomic.Int64
			defer r.Subscribe(scope.MustParse("/bench/"), func(*notification.Event) { got.Add(1) })()
			testutil.WaitFor(b, 10*time.Second, "interest", func() bool { return a.interest().Wanted(groupID("/bench/")) })
			ev := &notification.Event{Scope: scope.MustParse("/bench/"), WireSchema: "bytes", Data: make([]byte, size)}
			b.SetBytes(int64(size))
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				ev.ID.SequenceNumber = uint32(i)
				if err := a.Publish(context.Background(), ev); err != nil {
					b.Fatal(err)
				}
			}
			testutil.WaitFor(b, time.Minute, "all events", func() bool { return got.Load() >= int64(b.N) })
			el := time.Since(start)
			b.ReportMetric(float64(b.N)/el.Seconds(), "msgs/s")
		})
	}
}

// BenchmarkNetworkLatency measures the round trip of one event (ping on one
// node, pong from the other) over real loopback multicast, reliable and
// ordered, at 0% and 10% receive loss. The pong is published from a new
// goroutine (pong=go) or from inside the handler (pong=inline), as a
// replying service would. Both subscriptions borrow (WithoutRetention), as
// a latency-minded subscriber's do: the inline round trip then allocates
// nothing in the nodes, which allocs/op shows.
func BenchmarkNetworkLatency(b *testing.B) {
	for _, inline := range []bool{false, true} {
		for _, loss := range []float64{0, 0.1} {
			for _, size := range []int{64, 1 << 10} {
				name := fmt.Sprintf("pong=go/loss=%v/size=%d", loss, size)
				if inline {
					name = fmt.Sprintf("pong=inline/loss=%v/size=%d", loss, size)
				}
				b.Run(name, func(b *testing.B) {
					benchLatency(b, loss, size, inline)
				})
			}
		}
	}
}

func benchLatency(b *testing.B, loss float64, size int, inline bool) {
	nodes := startNodes(b, 2, func(i int, c *Config) {
		c.SocketAddr = "off"
		c.QoS, c.ExplicitQoS = QoS{Reliable: true, Ordered: true}, true
		if loss > 0 {
			c.NewConn = lossyOpen(loss, uint64(i+1))
		}
	})
	a, r := nodes[0], nodes[1]
	pong := make(chan struct{}, 1)
	ping, pongScope := scope.MustParse("/ping/"), scope.MustParse("/pong/")
	reply := &notification.Event{Scope: pongScope, WireSchema: "bytes", Data: make([]byte, size)}
	defer r.Subscribe(ping, func(ev *notification.Event) {
		reply.ID.SequenceNumber = ev.ID.SequenceNumber
		if inline {
			if err := r.Publish(context.Background(), reply); err != nil {
				b.Error(err)
			}
			return
		}
		go r.Publish(context.Background(), reply.Clone())
	}, WithoutRetention())()
	defer a.Subscribe(pongScope, func(*notification.Event) { pong <- struct{}{} }, WithoutRetention())()
	testutil.WaitFor(b, 10*time.Second, "interest", func() bool {
		return a.interest().Wanted(groupID("/ping/")) && r.interest().Wanted(groupID("/pong/"))
	})
	ev := &notification.Event{Scope: ping, WireSchema: "bytes", Data: make([]byte, size)}
	rtts := make([]time.Duration, 0, b.N)
	timeout := time.NewTimer(time.Hour) // one timer for the run: the benchmark's own allocations stay out of the figure
	defer timeout.Stop()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev.ID.SequenceNumber = uint32(i)
		t0 := time.Now()
		if err := a.Publish(context.Background(), ev); err != nil {
			b.Fatal(err)
		}
		timeout.Reset(10 * time.Second)
		select {
		case <-pong:
		case <-timeout.C:
			b.Fatalf("no pong for ping %d", i)
		}
		rtts = append(rtts, time.Since(t0))
	}
	rttstat.Report(b, rtts)
}
