package node

import (
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/rttstat"

	"github.com/rsbd/rsbd/notification"
)

// BenchmarkSocketRoundTrip measures a ping-pong between two socket clients
// of one node: the pinger sends an event on /bench/ping/, the ponger
// echoes every frame it gets, and the echo (every connection wants
// everything) is the pong; one frame outstanding. Beside rsbsocket's
// BenchmarkRelayRoundTrip it shows what the node adds to a relay. Both
// clients are in the node's process, so no reader polls for an answer.
func BenchmarkSocketRoundTrip(b *testing.B) {
	n := startNodes(b, 1, nil)[0]
	ping, pong := dialSocket(b, n), dialSocket(b, n)
	waitFor(b, 10*time.Second, "both connections", func() bool { return n.sock.Stats().ConnsCurrent == 2 })
	body, err := notification.Marshal(testEvent("/bench/ping/", 1, make([]byte, 64)))
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		var buf []byte
		for {
			got, err := pong.RecvInto(buf)
			if err == nil {
				err = pong.Send(got)
			}
			if err != nil {
				done <- err
				return
			}
			buf = got
		}
	}()
	rtts := make([]time.Duration, 0, b.N)
	var back []byte
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if err := ping.Send(body); err != nil {
			b.Fatal(err)
		}
		if back, err = ping.RecvInto(back); err != nil {
			b.Fatal(err)
		}
		rtts = append(rtts, time.Since(start))
	}
	b.StopTimer()
	rttstat.Report(b, rtts)
	_ = pong.Close()
	<-done
}
