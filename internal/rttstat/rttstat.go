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
