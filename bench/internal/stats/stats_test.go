package stats

import (
	"math"
	"testing"
	"time"
)

func durations(xs ...int) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x)
	}
	return out
}

func TestPercentileNearestRank(t *testing.T) {
	s := durations(50, 10, 40, 20, 30) // unsorted on purpose
	cases := []struct {
		p    float64
		want time.Duration
	}{
		{0, 10}, {1, 10}, {20, 10}, {21, 20}, {50, 30}, {90, 50}, {99, 50}, {100, 50}, {150, 50}, {-5, 10},
	}
	for _, c := range cases {
		if got := Percentile(s, c.p); got != c.want {
			t.Errorf("Percentile(p=%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if s[0] != 50 {
		t.Fatal("Percentile sorted its input in place")
	}
	if Percentile(nil, 50) != 0 {
		t.Fatal("Percentile of no samples is not 0")
	}
}

func TestPercentileHundredSamples(t *testing.T) {
	s := make([]time.Duration, 100)
	for i := range s {
		s[i] = time.Duration(100 - i) // 100..1
	}
	if got := Percentile(s, 50); got != 50 {
		t.Fatalf("p50 = %v, want 50", got)
	}
	if got := Percentile(s, 99); got != 99 {
		t.Fatalf("p99 = %v, want 99", got)
	}
}

func TestSummarize(t *testing.T) {
	l := Summarize(durations(4, 1, 3, 2))
	if l.Count != 4 || l.Min != 1 || l.Max != 4 || l.P50 != 2 || l.P99 != 4 || l.Mean != 2 {
		t.Fatalf("Summarize = %+v", l)
	}
	if (Summarize(nil) != Latency{}) {
		t.Fatal("Summarize(nil) is not zero")
	}
}

func TestMedian(t *testing.T) {
	if got := Median([]float64{3, 1, 2}); got != 2 {
		t.Fatalf("odd median = %v", got)
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Fatalf("even median = %v", got)
	}
	if Median(nil) != 0 {
		t.Fatal("median of nothing is not 0")
	}
}

func TestRate(t *testing.T) {
	t0 := time.Unix(100, 0)
	if got := Rate(1001, t0, t0.Add(time.Second)); got != 1000 {
		t.Fatalf("rate = %v, want 1000", got)
	}
	if Rate(1, t0, t0.Add(time.Second)) != 0 || Rate(10, t0, t0) != 0 || Rate(10, t0.Add(time.Second), t0) != 0 {
		t.Fatal("undefined rates are not 0")
	}
}

func TestRatio(t *testing.T) {
	if got := Ratio(3, 2); got != 1.5 {
		t.Fatalf("ratio = %v", got)
	}
	for _, c := range [][2]float64{{0, 1}, {1, 0}, {-1, 1}, {math.NaN(), 1}, {1, math.Inf(1)}} {
		if got := Ratio(c[0], c[1]); got != 0 {
			t.Fatalf("Ratio(%v, %v) = %v, want 0", c[0], c[1], got)
		}
	}
}
