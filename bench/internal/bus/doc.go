// Package bus puts the systems the benchmark compares behind one small
// publish/subscribe interface: rsbd embedded (package node), rsbd through a
// daemon's RSB socket, NATS (nats.go) and the raw references (UDP unicast
// and multicast echo clients, a TCP relay), so that the same throughput and
// ping-pong code measures each of them.
package bus
