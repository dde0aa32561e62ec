package datagram

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Errors returned by Decode, Append and the Packer. Decode returns them
// unwrapped (no allocation on hostile input); Append and the Packer wrap them
// with detail. Branch on them with errors.Is.
var (
	// ErrShort means the datagram ends before a field it announces.
	ErrShort = errors.New("datagram: truncated")
	// ErrVersion means the version byte is not Version.
	ErrVersion = errors.New("datagram: unknown version")
	// ErrKind means the kind byte is not a known Kind.
	ErrKind = errors.New("datagram: unknown kind")
	// ErrClass means the class byte is not a known Class.
	ErrClass = errors.New("datagram: unknown QoS class")
	// ErrFlags means an undefined flag bit is set, or FlagRepair on a kind
	// other than DATA.
	ErrFlags = errors.New("datagram: invalid flags")
	// ErrReserved means a reserved header byte, or the key id of an unsealed
	// datagram, is not zero.
	ErrReserved = errors.New("datagram: reserved field not zero")
	// ErrSeq means a DATA datagram has sequence number 0 (sequence spaces
	// start at 1), or another kind has a non-zero one.
	ErrSeq = errors.New("datagram: invalid sequence number")
	// ErrTrailing means bytes follow the last field of the body.
	ErrTrailing = errors.New("datagram: trailing bytes")
	// ErrEmpty means a record or range count is zero, or a Packer has
	// nothing to flush.
	ErrEmpty = errors.New("datagram: empty")
	// ErrTooMany means a record count exceeds MaxRecords or a range count
	// exceeds MaxNackRanges.
	ErrTooMany = errors.New("datagram: too many records or ranges")
	// ErrRecord means a record is empty or cannot fit a datagram.
	ErrRecord = errors.New("datagram: invalid record size")
	// ErrRange means ranges are not ascending, overlap, have first > last or
	// include sequence number 0, a heartbeat has trail > highest+1 or
	// trail 0, or an ACK has edge 0.
	ErrRange = errors.New("datagram: invalid range")
	// ErrTooLarge means the datagram would exceed MaxDatagramSize (or a
	// Packer's limit).
	ErrTooLarge = errors.New("datagram: too large")
	// ErrSealed means the datagram is sealed and must be opened by a Sealer
	// before decoding, or Append was asked to write a sealed datagram.
	ErrSealed = errors.New("datagram: sealed")
	// ErrFull means a record does not fit beside the records a Packer
	// already holds: flush first.
	ErrFull = errors.New("datagram: packer full")
)

var be = binary.BigEndian

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { return k >= KindData && k <= KindAck }

// String returns the kind's wire name.
func (k Kind) String() string {
	switch k {
	case KindData:
		return "DATA"
	case KindHeartbeat:
		return "HEARTBEAT"
	case KindNack:
		return "NACK"
	case KindGone:
		return "GONE"
	case KindAck:
		return "ACK"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// DataCapacity returns the largest record that fits alone in a DATA datagram
// of at most maxDatagram bytes (capped at MaxDatagramSize), or 0 if none does.
func DataCapacity(maxDatagram int) int {
	n := min(maxDatagram, MaxDatagramSize) - HeaderSize - countSize - RecordOverhead
	return max(n, 0)
}

// Append validates d and appends its encoding to dst. It writes plaintext
// datagrams only: FlagSealed must be clear and KeyID zero. On error dst is
// returned unchanged.
func Append(dst []byte, d *Datagram) ([]byte, error) {
	size, err := encodedSize(d)
	if err != nil {
		return dst, err
	}
	return appendEncoded(slices.Grow(dst, size), d), nil
}

// appendEncoded appends the encoding of the validated d.
func appendEncoded(dst []byte, d *Datagram) []byte {
	dst = appendHeader(dst, d)
	switch d.Kind {
	case KindData:
		dst = be.AppendUint16(dst, uint16(d.RecordCount()))
		for _, r := range d.Records {
			dst = be.AppendUint32(dst, uint32(len(r)))
			dst = append(dst, r...)
		}
		for _, ps := range d.Pieces {
			dst = be.AppendUint32(dst, uint32(piecesLen(ps)))
			for _, p := range ps {
				dst = append(dst, p...)
			}
		}
	case KindHeartbeat:
		dst = be.AppendUint64(dst, d.Trail)
		dst = be.AppendUint64(dst, d.Highest)
	case KindNack:
		dst = append(dst, d.Target[:]...)
		dst = appendRanges(dst, d.Ranges)
	case KindGone:
		dst = appendRanges(dst, d.Ranges)
	case KindAck:
		dst = append(dst, d.Target[:]...)
		dst = be.AppendUint64(dst, d.Edge)
	}
	return dst
}

// encodedSize validates d and returns its encoded size.
func encodedSize(d *Datagram) (int, error) {
	if err := checkHeader(d); err != nil {
		return 0, err
	}
	var size int
	switch d.Kind {
	case KindData:
		n, err := recordsSize(d)
		if err != nil {
			return 0, err
		}
		size = HeaderSize + n
	case KindHeartbeat:
		if d.Trail == 0 || (d.Highest != ^uint64(0) && d.Trail > d.Highest+1) {
			return 0, fmt.Errorf("%w: heartbeat trail %d highest %d", ErrRange, d.Trail, d.Highest)
		}
		size = HeaderSize + heartbeatBodySize
	case KindAck:
		if d.Edge == 0 {
			return 0, fmt.Errorf("%w: ACK edge 0", ErrRange)
		}
		size = HeaderSize + ackBodySize
	case KindNack, KindGone:
		if err := checkRanges(d.Ranges); err != nil {
			return 0, err
		}
		size = HeaderSize + countSize + len(d.Ranges)*rangeSize
		if d.Kind == KindNack {
			size += targetSize
		}
	}
	if size > MaxDatagramSize {
		return 0, fmt.Errorf("%w: %d bytes", ErrTooLarge, size)
	}
	return size, nil
}

// checkHeader validates the header fields of d for encoding.
func checkHeader(d *Datagram) error {
	switch {
	case !d.Kind.Valid():
		return fmt.Errorf("%w: %d", ErrKind, d.Kind)
	case !d.Stream.Class.Valid():
		return fmt.Errorf("%w: %d", ErrClass, d.Stream.Class)
	case d.Flags&FlagSealed != 0:
		return fmt.Errorf("%w: Append writes plaintext, seal with a Sealer", ErrSealed)
	case d.Flags&^(FlagSealed|FlagRepair) != 0:
		return fmt.Errorf("%w: %#x", ErrFlags, uint8(d.Flags))
	case d.Flags&FlagRepair != 0 && d.Kind != KindData:
		return fmt.Errorf("%w: repair flag on %v", ErrFlags, d.Kind)
	case d.KeyID != 0:
		return fmt.Errorf("%w: key id %d on an unsealed datagram", ErrReserved, d.KeyID)
	case d.Kind == KindData && d.Seq == 0:
		return fmt.Errorf("%w: DATA with sequence number 0", ErrSeq)
	case d.Kind != KindData && d.Seq != 0:
		return fmt.Errorf("%w: %v with sequence number %d", ErrSeq, d.Kind, d.Seq)
	}
	return nil
}

// recordsSize validates the records of a DATA datagram (Records or
// Pieces) and returns the body size.
func recordsSize(d *Datagram) (int, error) {
	count := d.RecordCount()
	switch {
	case len(d.Records) > 0 && len(d.Pieces) > 0:
		return 0, fmt.Errorf("%w: both records and pieces", ErrRecord)
	case count == 0:
		return 0, fmt.Errorf("%w: DATA without records", ErrEmpty)
	case count > MaxRecords:
		return 0, fmt.Errorf("%w: %d records", ErrTooMany, count)
	}
	n := countSize
	for i := 0; i < count; i++ {
		l := d.RecordLen(i)
		if l == 0 || l > DataCapacity(MaxDatagramSize) {
			return 0, fmt.Errorf("%w: record %d has %d bytes", ErrRecord, i, l)
		}
		n += RecordOverhead + l
		if n > MaxDatagramSize {
			return 0, fmt.Errorf("%w: records exceed %d bytes", ErrTooLarge, MaxDatagramSize)
		}
	}
	return n, nil
}

// checkRanges validates NACK or GONE ranges.
func checkRanges(rs []Range) error {
	switch {
	case len(rs) == 0:
		return fmt.Errorf("%w: no ranges", ErrEmpty)
	case len(rs) > MaxNackRanges:
		return fmt.Errorf("%w: %d ranges", ErrTooMany, len(rs))
	}
	if i := badRange(rs); i >= 0 {
		return fmt.Errorf("%w: range %d [%d, %d]", ErrRange, i, rs[i].First, rs[i].Last)
	}
	return nil
}

// badRange returns the index of the first range that is empty, includes 0,
// or does not lie above its predecessor; -1 if all are valid.
func badRange(rs []Range) int {
	for i, r := range rs {
		if r.First == 0 || r.First > r.Last || (i > 0 && r.First <= rs[i-1].Last) {
			return i
		}
	}
	return -1
}

func appendHeader(dst []byte, d *Datagram) []byte {
	dst = append(dst, Version, byte(d.Kind), byte(d.Flags), byte(d.Stream.Class), d.KeyID, 0, 0, 0)
	dst = append(dst, d.Stream.Instance[:]...)
	dst = append(dst, d.Stream.Group[:]...)
	return be.AppendUint64(dst, d.Seq)
}

func appendRanges(dst []byte, rs []Range) []byte {
	dst = be.AppendUint16(dst, uint16(len(rs)))
	for _, r := range rs {
		dst = be.AppendUint64(dst, r.First)
		dst = be.AppendUint64(dst, r.Last)
	}
	return dst
}
