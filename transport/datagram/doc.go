// Package datagram owns the daemon-to-daemon wire format: a small versioned
// header of rsbd's own around RSB FragmentedNotification records. See
// docs/WIRE.md for the byte layout. It imports nothing of rsbd's and is the
// only package the qos stream machines share with the transport.
package datagram
