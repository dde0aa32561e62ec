package rttstat

import (
	"testing"
	"time"
)

// TestMicros keeps the fraction of a microsecond.
func TestMicros(t *testing.T) {
	if got := micros(1500 * time.Nanosecond); got != 1.5 {
		t.Fatalf("micros(1.5 µs) = %v", got)
	}
}

// BenchmarkReport checks that Report takes samples in any order: the
// median of 1..100 µs reversed is 51 µs, the 99th percentile 100 µs.
func BenchmarkReport(b *testing.B) {
	for b.Loop() {
	}
	rtts := make([]time.Duration, 100)
	for i := range rtts {
		rtts[i] = time.Duration(100-i) * time.Microsecond
	}
	Report(b, rtts)
	if rtts[50] != 51*time.Microsecond || rtts[99] != 100*time.Microsecond {
		b.Fatalf("sorted samples %v / %v, want 51 µs / 100 µs", rtts[50], rtts[99])
	}
}
