// Package e2e holds rsbd's end-to-end tests: they build cmd/rsbd once, run
// real daemons on the loopback interface (each test with its own ports and
// multicast pool) and talk to them as raw RSB socket clients, checking
// delivery, QoS, interest, failure handling, refusal of bad input, metrics
// and shutdown from the outside. The package has no code besides its tests.
package e2e
