// Package agent runs the benchmark's worker processes. The benchmark binary
// re-executes itself as an agent; the parent sends it operations as JSON
// lines on its standard input and reads replies as JSON lines from its
// standard output. Every operation runs on its own goroutine, may send
// progress replies before its final one, and is identified by a request id.
package agent
