// Package e2e holds rsbd's end-to-end tests: they build cmd/rsbd once, run
// real daemons on the loopback interface (each test with its own ports and
// multicast pool) and talk to them as raw RSB socket clients, checking
// delivery, QoS, interest, failure handling, refusal of bad input, metrics
// and shutdown from the outside. Run as root with iproute2, they also
// build a small network of namespaces joined by a bridge (veth pairs, MTU
// 1500) and run daemons on separate hosts there, reached through their
// Unix sockets; elsewhere those tests skip. The package has no code
// besides its tests.
package e2e
