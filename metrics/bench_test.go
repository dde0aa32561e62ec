package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func BenchmarkCounterInc(b *testing.B) {
	m := New(prometheus.NewRegistry())
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.EventsIn[PathNetwork].Inc()
		}
	})
}

func BenchmarkDrop(b *testing.B) {
	m := New(prometheus.NewRegistry())
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Drop(DropQueueFull)
		}
	})
}

func BenchmarkHistogramObserve(b *testing.B) {
	m := New(prometheus.NewRegistry())
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.EventSize[PathSocket].Observe(1500)
		}
	})
}

func BenchmarkGather(b *testing.B) {
	reg := NewRegistry()
	New(reg)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
