// Package rttstat owns how the benchmarks measure and report round trips:
// the ping-pong through a relay of frame connections (PingPong), and the
// median and 99th percentile of a run's samples in microseconds (Report).
package rttstat
