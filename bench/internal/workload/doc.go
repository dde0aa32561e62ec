// Package workload is the measuring code shared by every system: the
// throughput sender and receiver and the ping-pong pair, written against
// bus.Endpoint.
package workload
