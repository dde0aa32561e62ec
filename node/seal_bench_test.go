package node

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// BenchmarkSealing measures what sealing the data plane costs: the
// throughput of reliable events between two embedded nodes
// (path=embedded: Publish on one, a subscription on the other) and through
// two daemons (path=daemons: a socket client of one to a socket client of
// the other, as BenchmarkTwoDaemons), over loopback multicast, each size
// without and with a key in the same run.
func BenchmarkSealing(b *testing.B) {
	for _, path := range []string{"embedded", "daemons"} {
		for _, size := range []int{64, 1 << 10, 64 << 10} {
			for _, key := range []string{"off", "on"} {
				b.Run(fmt.Sprintf("path=%s/size=%d/key=%s", path, size, key), func(b *testing.B) {
					mod := func(_ int, c *Config) {
						if key == "on" {
							c.Keys, c.ClusterLabel = []datagram.Key{sealKey(1)}, "bench"
						}
					}
					if path == "embedded" {
						benchSealedEmbedded(b, size, mod)
					} else {
						benchSealedDaemons(b, size, mod)
					}
				})
			}
		}
	}
}

func benchSealedEmbedded(b *testing.B, size int, mod func(int, *Config)) {
	nodes := startNodes(b, 2, func(i int, c *Config) { c.SocketAddr = "off"; mod(i, c) })
	a, r := nodes[0], nodes[1]
	var got atomic.Int64
	defer r.Subscribe(scope.MustParse("/bench/"), func(*notification.Event) { got.Add(1) })()
	testutil.WaitFor(b, 10*time.Second, "interest", func() bool { return a.interest().Wanted(groupID("/bench/")) })
	ev := &notification.Event{Scope: scope.MustParse("/bench/"), WireSchema: "bytes", Data: make([]byte, size)}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev.ID.SequenceNumber = uint32(i)
		if err := a.Publish(context.Background(), ev); err != nil {
			b.Fatal(err)
		}
	}
	testutil.WaitFor(b, time.Minute, "all events", func() bool { return got.Load() >= int64(b.N) })
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	checkNothingRefused(b, nodes)
}

func benchSealedDaemons(b *testing.B, size int, mod func(int, *Config)) {
	const sc = "/bench/two/"
	nodes := startNodes(b, 2, mod)
	a, r := nodes[0], nodes[1]
	sub := dialSocket(b, r)
	if err := sub.Send(helloBody(b, 0, sc)); err != nil {
		b.Fatal(err)
	}
	testutil.WaitFor(b, 10*time.Second, "interest", func() bool { return a.interest().Wanted(groupID(sc)) })
	var got atomic.Int64
	done := make(chan error, 1)
	go countFrames(sub, &got, done)
	pub := dialSocket(b, a)
	ev := testutil.Event(sc, 0, make([]byte, size))
	ev.ID.SenderID = notification.NewParticipantID()
	b.SetBytes(int64(size))
	b.ResetTimer()
	err := sendBatched(pub, ev, b.N, 128, func(i int, ev *notification.Event) { ev.ID.SequenceNumber = uint32(i) })
	if err != nil {
		b.Fatal(err)
	}
	testutil.WaitFor(b, time.Minute, "every event", func() bool { return got.Load() >= int64(b.N) })
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	_ = sub.Close()
	<-done
	checkNothingRefused(b, nodes)
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
