package stats

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0 <= p <= 100) of samples using
// the nearest-rank method on a sorted copy: the smallest sample such that at
// least p% of the samples are less than or equal to it. It returns 0 for no
// samples.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return percentileSorted(s, p)
}

func percentileSorted(s []time.Duration, p float64) time.Duration {
	p = min(max(p, 0), 100)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	if rank < 1 {
		rank = 1
	}
	return s[rank-1]
}

// Latency summarises round-trip samples.
type Latency struct {
	Count int           `json:"count"`
	Min   time.Duration `json:"min_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	P999  time.Duration `json:"p999_ns"`
	Max   time.Duration `json:"max_ns"`
	Mean  time.Duration `json:"mean_ns"`
}

// Summarize computes the Latency of samples (which it leaves unchanged).
func Summarize(samples []time.Duration) Latency {
	if len(samples) == 0 {
		return Latency{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Latency{
		Count: len(s),
		Min:   s[0],
		P50:   percentileSorted(s, 50),
		P90:   percentileSorted(s, 90),
		P99:   percentileSorted(s, 99),
		P999:  percentileSorted(s, 99.9),
		Max:   s[len(s)-1],
		Mean:  sum / time.Duration(len(s)),
	}
}

// Median returns the median of xs (the mean of the two middle values for
// an even count) and 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Rate is the receive rate of count events whose first arrived at first and
// last at last: the count-1 intervals between them over the elapsed time.
// It returns 0 when the rate is undefined (fewer than two events or no
// elapsed time).
func Rate(count int64, first, last time.Time) float64 {
	el := last.Sub(first)
	if count < 2 || el <= 0 {
		return 0
	}
	return float64(count-1) / el.Seconds()
}

// Ratio returns a/b, or 0 when either is not a positive number.
func Ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 || math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return 0
	}
	return a / b
}
