package node

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
)

// BenchmarkTwoDaemons is the two-daemon path in one process: a socket
// client publishes events (batches of 128 frames per write, as the bench's
// clients do) to daemon A, which sends them reliably over loopback
// multicast to daemon B, which writes them to a socket client that
// announced a listener with an introspection Hello (100 KiB and 1 MiB events are
// fragmented and reassembled on B). One op is one event
// received by that client.
func BenchmarkTwoDaemons(b *testing.B) {
	for _, size := range []int{64, 1 << 10, 16 << 10, 100 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) { benchTwoDaemons(b, size) })
	}
}

func benchTwoDaemons(b *testing.B, size int) {
	a, _, sub := remoteListener(b, "/bench/two/")
	var got atomic.Int64
	done := make(chan error, 1)
	go countFrames(sub, &got, done)
	pub := dialSocket(b, a)
	ev := testutil.Event("/bench/two/", 0, make([]byte, size))
	ev.ID.SenderID = notification.NewParticipantID()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.SetBytes(int64(size))
	b.ResetTimer()
	err := sendBatched(pub, ev, b.N, 128, func(i int, ev *notification.Event) { ev.ID.SequenceNumber = uint32(i) })
	if err != nil {
		b.Fatal(err)
	}
	testutil.WaitFor(b, time.Minute, "every event", func() bool { return got.Load() >= int64(b.N) })
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(b.N), "allocs/msg")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N), "B/msg")
	_ = sub.Close()
	<-done
}
