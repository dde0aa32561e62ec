// Package bus puts the systems the benchmark compares behind one small
// publish/subscribe interface: rsbd embedded (package node), rsbd through a
// daemon's RSB socket, NATS (nats.go) and a raw UDP echo client, so that the
// same throughput and ping-pong code measures each of them.
package bus
