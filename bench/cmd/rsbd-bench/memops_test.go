package main

import "testing"

// TestSettle: a reading taken while memory is still being let go is not
// the measurement; the first two consecutive readings that agree are.
func TestSettle(t *testing.T) {
	for _, c := range []struct {
		name     string
		readings []uint64
		want     uint64
		reads    int
	}{
		{"settled at once", []uint64{10_000_000, 10_050_000, 1}, 10_050_000, 2},
		{"a burst still held", []uint64{31_800_000, 10_800_000, 10_800_500, 1}, 10_800_500, 3},
		{"falling, then settled", []uint64{30e6, 20e6, 12e6, 12.05e6}, 12.05e6, 4},
		{"never agreeing", []uint64{1e6, 2e6, 4e6, 8e6}, 8e6, 4},
	} {
		i := 0
		got := settle(func() uint64 { v := c.readings[i]; i++; return v }, 0, 4)
		if got != c.want || i != c.reads {
			t.Errorf("%s: settle = %d after %d readings, want %d after %d", c.name, got, i, c.want, c.reads)
		}
	}
}
