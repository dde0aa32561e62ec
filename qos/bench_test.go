package qos

import (
	"fmt"
	"testing"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// BenchmarkMachines measures the sender and receiver machines alone, wired
// back to back without loss: one op is one DATA datagram numbered, retained
// (reliable classes), handed to the receiver and delivered, with Ticks at
// their deadlines. Datagrams are reused round-robin once evicted, so
// allocs/op are the machines' own.
func BenchmarkMachines(b *testing.B) {
	for _, class := range allClasses {
		for _, records := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/records=%d", className(class), records), func(b *testing.B) {
				benchMachines(b, class, records)
			})
		}
	}
}

func benchMachines(b *testing.B, class datagram.Class, records int) {
	const retain = 1024
	key := testKey(class)
	s, err := NewSender(key, SenderConfig{RetainCount: retain})
	if err != nil {
		b.Fatal(err)
	}
	r := newTestReceiver(b, class, ReceiverConfig{})
	pool := make([]datagram.Datagram, 2*retain)
	recs := make([][]byte, records)
	for i := range recs {
		recs[i] = make([]byte, 100)
	}
	var sout, rout Output
	now := simBase
	delivered := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(10 * time.Microsecond)
		d := &pool[i%len(pool)]
		*d = datagram.Datagram{Records: recs}
		if _, err := s.Send(d, now, &sout); err != nil {
			b.Fatal(err)
		}
		if dl := s.NextDeadline(); !dl.IsZero() && !dl.After(now) {
			s.Tick(now, &sout)
		}
		for _, d := range sout.Datagrams {
			r.Handle(d, now, &rout)
		}
		delivered += len(rout.Deliveries)
		sout.Reset()
		rout.Reset()
	}
	b.StopTimer()
	if delivered != b.N {
		b.Fatalf("delivered %d of %d", delivered, b.N)
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/sec, "dgrams/s")
	b.ReportMetric(float64(b.N*records)/sec, "records/s")
}

// BenchmarkPipeline runs sender and receiver through the simulated network
// (200 µs one-way delay) at 10,000 datagrams/s of virtual time, without loss
// and with 10% loss on every link (NACKs included), repairing everything.
// Throughput is wall-clock and includes the harness; p50/p99 are virtual
// publication-to-delivery latencies.
func BenchmarkPipeline(b *testing.B) {
	for _, loss := range []float64{0, 0.1} {
		for _, class := range reliableClasses {
			b.Run(fmt.Sprintf("loss=%g/%s", loss, className(class)), func(b *testing.B) {
				b.ReportAllocs()
				s := newSim(b, simConfig{class: class, n: b.N, interval: 100 * time.Microsecond, records: 4,
					loss: loss, seed: 1})
				s.run(s.resolved)
				b.StopTimer()
				n := s.nodes[0]
				if n.delivered != b.N {
					b.Fatalf("delivered %d of %d", n.delivered, b.N)
				}
				p50, p99 := percentiles(n.latency)
				sec := b.Elapsed().Seconds()
				b.ReportMetric(float64(b.N)/sec, "dgrams/s")
				b.ReportMetric(float64(4*b.N)/sec, "records/s")
				b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
				b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
			})
		}
	}
}
