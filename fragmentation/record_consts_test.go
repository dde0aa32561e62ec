package fragmentation

import "github.com/rsbd/rsbd/transport/datagram"

// The sizes the daemon's engine cuts records to, which the tests split
// for: a DATA datagram's header with its record count, each record's
// length prefix, and the room the engine keeps around reassembled data.
const (
	dataHeader     = datagram.HeaderSize + 2
	recordOverhead = 4
	reasmHead      = 512
	reasmTail      = 1024
	// DefaultLoopbackDatagram is the datagram size of a node on loopback.
	DefaultLoopbackDatagram = 60000
)
