package node

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"

	"github.com/rsbd/rsbd/internal/testutil"
)

// BenchmarkSealing measures what sealing the data plane costs in
// throughput: reliable events between two embedded nodes (path=embedded:
// Publish on one, a subscription on the other) and through two daemons
// (path=daemons: a socket client of one to a socket client of the other,
// as BenchmarkTwoDaemons), over loopback multicast. Each sub-benchmark runs
// an open pair and a sealed pair side by side and sends them rounds of
// events in turn, each first every other round, so both see the same load
// of the machine; b.N is the
// events each pair receives. It reports the throughput of both, the cost
// (how much lower the sealed pair's is, in percent) and the CPU time the
// process spent per event during each pair's rounds, which the load of a
// shared machine disturbs less than the throughput.
func BenchmarkSealing(b *testing.B) {
	for _, path := range []string{"embedded", "daemons"} {
		for _, size := range []int{64, 1 << 10, 64 << 10} {
			b.Run(fmt.Sprintf("path=%s/size=%d", path, size), func(b *testing.B) {
				open, sealed := newBenchPair(b, path, false), newBenchPair(b, path, true)
				round := max(2, (128<<10)/size) // about 128 KiB a round
				ev := testutil.Event(benchPairScope, 0, make([]byte, size))
				ev.ID.SenderID = notification.NewParticipantID()
				var took, cpu [2]time.Duration
				b.SetBytes(int64(size))
				b.ResetTimer()
				pairs := []*benchPair{open, sealed}
				for r, sent := 0, 0; sent < b.N; r, sent = r+1, sent+round {
					n := min(round, b.N-sent)
					for j := range pairs {
						i := (j + r) % 2 // each pair goes first every other round
						c0 := processCPU()
						took[i] += pairs[i].send(b, ev, n)
						cpu[i] += processCPU() - c0
					}
				}
				b.StopTimer()
				perMsg := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
				b.ReportMetric(perMsg(cpu[0]), "open-cpu-µs/msg")
				b.ReportMetric(perMsg(cpu[1]), "sealed-cpu-µs/msg")
				rate := func(d time.Duration) float64 { return float64(b.N) / d.Seconds() }
				b.ReportMetric(rate(took[0]), "open-msgs/s")
				b.ReportMetric(rate(took[1]), "sealed-msgs/s")
				b.ReportMetric(rate(took[0])*float64(size)/1e6, "open-MB/s")
				b.ReportMetric(rate(took[1])*float64(size)/1e6, "sealed-MB/s")
				b.ReportMetric(100*(1-rate(took[1])/rate(took[0])), "cost-%")
				checkNothingRefused(b, sealed.nodes)
			})
		}
	}
}

const benchPairScope = "/bench/seal/"

// benchPair is two nodes, open or sealed, and the way the benchmark sends
// events from the first to the second and counts them there.
type benchPair struct {
	nodes []*Node
	pub   *sockclient.ClientConn // daemons only
	got   atomic.Int64
	want  atomic.Int64
	done  chan struct{} // a receive reached want
	seq   uint32
}

func newBenchPair(b *testing.B, path string, keyed bool) *benchPair {
	b.Helper()
	p := &benchPair{done: make(chan struct{}, 1)}
	p.nodes = startNodes(b, 2, func(_ int, c *Config) {
		if path == "embedded" {
			c.SocketAddr = "off"
		}
		if keyed {
			c.Keys, c.ClusterLabel = []datagram.Key{sealKey(1)}, "bench"
		}
	})
	a, r := p.nodes[0], p.nodes[1]
	if path == "embedded" {
		b.Cleanup(r.Subscribe(scope.MustParse(benchPairScope), func(*notification.Event) { p.count() }))
	} else {
		sub := dialSocket(b, r)
		if err := sub.Send(helloBody(b, 0, benchPairScope)); err != nil {
			b.Fatal(err)
		}
		go func() {
			var body []byte
			for {
				var err error
				if body, err = sub.RecvInto(body); err != nil {
					return
				}
				p.count()
			}
		}()
		p.pub = dialSocket(b, a)
	}
	testutil.WaitFor(b, 10*time.Second, "interest", func() bool { return a.interest().Wanted(groupID(benchPairScope)) })
	return p
}

// count counts one event received and signals when it completes a round.
func (p *benchPair) count() {
	if p.got.Add(1) == p.want.Load() {
		p.done <- struct{}{}
	}
}

// send sends n events and returns how long until the last was received.
func (p *benchPair) send(b *testing.B, ev *notification.Event, n int) time.Duration {
	p.want.Store(p.got.Load() + int64(n))
	start := time.Now()
	set := func(_ int, ev *notification.Event) { p.seq++; ev.ID.SequenceNumber = p.seq }
	if p.pub != nil {
		if err := sendBatched(p.pub, ev, n, 128, set); err != nil {
			b.Fatal(err)
		}
	} else {
		for i := range n {
			set(i, ev)
			if err := p.nodes[0].Publish(context.Background(), ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		b.Fatalf("%d of %d events received", p.got.Load(), p.want.Load())
	}
	return time.Since(start)
}

// processCPU returns the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// checkNothingRefused fails the benchmark if a node refused an authentic
// datagram: the figures would then measure repair, not sealing.
func checkNothingRefused(b *testing.B, nodes []*Node) {
	b.Helper()
	for i, n := range nodes {
		if s := n.GuardStats(); s.Auth+s.UnknownKey+s.Replay+s.Unsealed+s.SealErrors != 0 {
			b.Fatalf("node %d refused datagrams: %+v", i, s)
		}
	}
}
