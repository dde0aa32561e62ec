// Package stats holds the arithmetic of the benchmark: percentiles of
// round-trip samples, medians of per-window rates and receive-side rates.
package stats
