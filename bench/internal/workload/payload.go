package workload

import (
	"encoding/binary"
	"errors"
)

// Kind tells what an event of the benchmark is for.
type Kind byte

// Kinds of events.
const (
	// KindProbe events are sent until the receiver has seen one: they
	// establish the path (interest, streams) and are not counted.
	KindProbe Kind = 1
	// KindWarm events precede the measured ones without a pause; they are
	// counted for loss but not timed.
	KindWarm Kind = 2
	// KindMeasure events are counted and timed.
	KindMeasure Kind = 3
	// KindPing events are round trips.
	KindPing Kind = 4
)

// HeaderSize is the size of the header at the start of every payload:
// kind (1 byte), index (8 bytes), send time (8 bytes).
const HeaderSize = 17

// ErrShort is returned for a payload shorter than HeaderSize.
var ErrShort = errors.New("workload: payload shorter than its header")

// Header is the start of every payload.
type Header struct {
	Kind  Kind
	Index uint64
	Sent  int64
}

// PutHeader writes h to the start of p (len(p) >= HeaderSize).
func PutHeader(p []byte, h Header) {
	p[0] = byte(h.Kind)
	binary.LittleEndian.PutUint64(p[1:9], h.Index)
	binary.LittleEndian.PutUint64(p[9:17], uint64(h.Sent))
}

// ParseHeader reads the header at the start of p.
func ParseHeader(p []byte) (Header, error) {
	if len(p) < HeaderSize {
		return Header{}, ErrShort
	}
	return Header{
		Kind:  Kind(p[0]),
		Index: binary.LittleEndian.Uint64(p[1:9]),
		Sent:  int64(binary.LittleEndian.Uint64(p[9:17])),
	}, nil
}

// NewPayload returns a payload of size bytes (at least HeaderSize) filled
// with a pattern after the header.
func NewPayload(size int) []byte {
	p := make([]byte, max(size, HeaderSize))
	for i := HeaderSize; i < len(p); i++ {
		p[i] = byte(i)
	}
	return p
}
