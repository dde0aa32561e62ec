package rttstat

import (
	"slices"
	"testing"
	"time"
)

// Report sorts rtts in place and reports their median and 99th
// percentile as the benchmark metrics p50-µs and p99-µs. It reports
// nothing for no samples.
func Report(b *testing.B, rtts []time.Duration) {
	if len(rtts) == 0 {
		return
	}
	slices.Sort(rtts)
	b.ReportMetric(micros(rtts[len(rtts)/2]), "p50-µs")
	b.ReportMetric(micros(rtts[len(rtts)*99/100]), "p99-µs")
}

// micros is d in microseconds, with the fraction.
func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// Conn is the client side of a frame connection, as sockclient.ClientConn
// is: Send writes one frame, RecvInto reads the next into buf.
type Conn interface {
	Send(body []byte) error
	RecvInto(buf []byte) ([]byte, error)
	Close() error
}

// PingPong runs b.N round trips through a relay that forwards every frame
// of each connection to the other: ping sends body and waits for its
// echo, which pong sends back as it gets each frame; one frame is
// outstanding. It reports the round trips with Report and closes pong.
func PingPong(b *testing.B, ping, pong Conn, body []byte) {
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
	var err error
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if err = ping.Send(body); err == nil {
			back, err = ping.RecvInto(back)
		}
		if err != nil {
			b.Fatal(err)
		}
		rtts = append(rtts, time.Since(start))
	}
	b.StopTimer()
	Report(b, rtts)
	_ = pong.Close()
	<-done
}
