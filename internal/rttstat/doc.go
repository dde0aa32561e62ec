// Package rttstat owns how the benchmarks report round-trip times: the
// median and the 99th percentile of a run's samples, in microseconds.
package rttstat
