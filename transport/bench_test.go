package transport

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkMulticast measures datagrams/s and MB/s from one Endpoint to
// another over loopback multicast, with batched system calls (32 per
// sendmmsg/recvmmsg) and without (one per datagram). The sender keeps at
// most half the receiver's socket buffer in flight, so the figures are
// delivered throughput; loss_% reports what was lost anyway.
func BenchmarkMulticast(b *testing.B) {
	for _, size := range []int{64, 1024, 60 << 10} {
		for _, batch := range []int{1, DefaultBatch} {
			b.Run(fmt.Sprintf("size=%d/batch=%d", size, batch), func(b *testing.B) {
				benchMulticast(b, size, batch)
			})
		}
	}
}

func benchMulticast(b *testing.B, size, batch int) {
	cfg := Config{MaxDatagram: max(size, DefaultMaxDatagram), ReadBatch: batch, WriteBatch: batch}
	g := testGroups(b, 1)
	var got atomic.Int64
	signal := make(chan struct{}, 1)
	recv := open(b, cfg, func(p []Packet) {
		got.Add(int64(len(p)))
		select {
		case signal <- struct{}{}:
		default:
		}
	})
	send := open(b, cfg, func([]Packet) {})
	mustJoin(b, recv, g...)
	// The kernel charges a datagram's buffer (truesize), not its length,
	// against the receive buffer: budget size + 1 KiB each.
	window := max(int64(recv.Stats().RecvBuffer/2/(size+1024)), int64(batch))
	bufs := make([][]byte, batch)
	for i := range bufs {
		bufs[i] = make([]byte, size)
	}
	var lost int64
	b.SetBytes(int64(size))
	b.ResetTimer()
	start := time.Now()
	for sent := 0; sent < b.N; {
		n := min(batch, b.N-sent)
		for int64(sent)-got.Load()-lost > window-int64(n) {
			if !waitSignal(signal) {
				lost = int64(sent) - got.Load() // stalled: the rest in flight is lost
			}
		}
		if err := send.Send(g, bufs[:n]...); err != nil {
			b.Fatal(err)
		}
		sent += n
	}
	for int64(b.N)-got.Load()-lost > 0 && waitSignal(signal) {
	}
	elapsed := time.Since(start)
	b.StopTimer()
	received := got.Load()
	b.ReportMetric(float64(received)/elapsed.Seconds(), "datagrams/s")
	b.ReportMetric(100*float64(int64(b.N)-received)/float64(b.N), "loss_%")
}

// waitSignal waits for the receiver's next batch; false after 200 ms of
// silence.
func waitSignal(signal <-chan struct{}) bool {
	t := time.NewTimer(200 * time.Millisecond)
	defer t.Stop()
	select {
	case <-signal:
		return true
	case <-t.C:
		return false
	}
}
