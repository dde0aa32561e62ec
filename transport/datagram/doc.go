// Package datagram owns the daemon-to-daemon wire format: a small versioned
// header of rsbd's own around RSB FragmentedNotification records. See
// docs/WIRE.md for the byte layout. It imports nothing of rsbd's and is the
// only package the qos stream machines share with the transport.
//
// Append encodes a Datagram after validating it; Decode parses one without
// allocating (records alias the input) and accepts exactly what Append
// writes, so a decoded datagram re-encodes to the same bytes. A Packer
// batches the records of one stream into DATA datagrams up to a size limit,
// so many small events share one datagram. All limits are in params.go.
//
// A Sealer seals encoded datagrams with AES-256-GCM (key id in the header,
// the sender's epoch and counter in a trailer; header, trailer and cluster
// label authenticated) and opens them back, in place, into plaintext
// datagrams. Append writes plaintext only and Decode rejects sealed
// datagrams with ErrSealed: the order is Append, Seal on the way out and
// Open, Decode on the way in. ParseKeys reads a keyring from a key file;
// Replay, a pure structure, refuses replayed datagrams by their sender's
// epoch and counter.
package datagram
