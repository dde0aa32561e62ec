// Package testport owns Hold, the tests' way to reserve a loopback address
// for a daemon or node that starts later: a free port held for TCP and UDP
// (memberlist's gossip needs both) until the test lets it go.
package testport
