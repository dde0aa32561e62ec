package datagram

// Decode parses the datagram b into d. Every field is length-checked before
// use and nothing is allocated from a claimed count before it has been
// checked against its limit and against the bytes actually present.
//
// d.Records alias b (each with its capacity cut to its length) and d.Records
// and d.Ranges reuse their capacity, so decoding into the same Datagram
// repeatedly does not allocate. Fields that do not belong to the decoded kind
// are zeroed. On error Decode returns one of the package's sentinel errors and
// the contents of d are unspecified.
//
// Decode accepts exactly what Append produces: if it succeeds, Append(nil, d)
// reproduces b byte for byte. Sealed datagrams are rejected with ErrSealed;
// open them with Sealer.Open first.
func Decode(b []byte, d *Datagram) error {
	if err := decodeHeader(b, d); err != nil {
		return err
	}
	body := b[HeaderSize:]
	switch d.Kind {
	case KindData:
		return decodeRecords(body, d)
	case KindHeartbeat:
		return decodeHeartbeat(body, d)
	case KindNack:
		if len(body) < targetSize {
			return ErrShort
		}
		copy(d.Target[:], body)
		return decodeRanges(body[targetSize:], d)
	case KindAck:
		return decodeAck(body, d)
	default: // KindGone; decodeHeader rejected unknown kinds.
		return decodeRanges(body, d)
	}
}

func decodeAck(body []byte, d *Datagram) error {
	if len(body) < ackBodySize {
		return ErrShort
	}
	if len(body) > ackBodySize {
		return ErrTrailing
	}
	copy(d.Target[:], body)
	if d.Edge = be.Uint64(body[targetSize:]); d.Edge == 0 {
		return ErrRange
	}
	return nil
}

// decodeHeader checks the fixed header and fills the header fields of d,
// resetting the body fields.
func decodeHeader(b []byte, d *Datagram) error {
	switch {
	case len(b) < HeaderSize:
		return ErrShort
	case len(b) > MaxDatagramSize:
		return ErrTooLarge
	case b[0] != Version:
		return ErrVersion
	}
	kind, flags, class := Kind(b[1]), Flags(b[2]), Class(b[3])
	seq := be.Uint64(b[40:HeaderSize])
	switch {
	case !kind.Valid():
		return ErrKind
	case flags&^(FlagSealed|FlagRepair) != 0:
		return ErrFlags
	case flags&FlagRepair != 0 && kind != KindData:
		return ErrFlags
	case !class.Valid():
		return ErrClass
	case b[5]|b[6]|b[7] != 0:
		return ErrReserved
	case flags&FlagSealed != 0:
		return ErrSealed
	case b[4] != 0:
		return ErrReserved
	case (kind == KindData) != (seq != 0):
		return ErrSeq
	}
	d.Kind, d.Flags, d.KeyID, d.Seq = kind, flags, 0, seq
	d.Stream.Class = class
	copy(d.Stream.Instance[:], b[8:24])
	copy(d.Stream.Group[:], b[24:40])
	d.Records = d.Records[:0]
	d.Trail, d.Highest = 0, 0
	d.Target = InstanceID{}
	d.Edge = 0
	d.Ranges = d.Ranges[:0]
	return nil
}

// readCount reads the item count that starts a records or ranges body and
// checks it against limit and the bytes left, each item taking at least
// minSize of them; it returns the count and the items' bytes.
func readCount(body []byte, limit, minSize int) (int, []byte, error) {
	if len(body) < countSize {
		return 0, nil, ErrShort
	}
	count := int(be.Uint16(body))
	body = body[countSize:]
	switch {
	case count == 0:
		return 0, nil, ErrEmpty
	case count > limit:
		return 0, nil, ErrTooMany
	case count*minSize > len(body):
		return 0, nil, ErrShort
	}
	return count, body, nil
}

func decodeRecords(body []byte, d *Datagram) error {
	count, body, err := readCount(body, MaxRecords, RecordOverhead+1)
	if err != nil {
		return err
	}
	recs := d.Records[:0]
	if cap(recs) < count {
		recs = make([][]byte, 0, count)
	}
	for range count {
		if len(body) < RecordOverhead {
			return ErrShort
		}
		n := be.Uint32(body)
		body = body[RecordOverhead:]
		if n == 0 {
			return ErrRecord
		}
		if uint64(n) > uint64(len(body)) {
			return ErrShort
		}
		recs = append(recs, body[:n:n])
		body = body[n:]
	}
	d.Records = recs
	if len(body) != 0 {
		return ErrTrailing
	}
	return nil
}

func decodeHeartbeat(body []byte, d *Datagram) error {
	if len(body) < heartbeatBodySize {
		return ErrShort
	}
	if len(body) > heartbeatBodySize {
		return ErrTrailing
	}
	d.Trail, d.Highest = be.Uint64(body), be.Uint64(body[8:])
	if d.Trail == 0 || (d.Highest != ^uint64(0) && d.Trail > d.Highest+1) {
		return ErrRange
	}
	return nil
}

func decodeRanges(body []byte, d *Datagram) error {
	count, body, err := readCount(body, MaxNackRanges, rangeSize)
	if err != nil {
		return err
	}
	if count*rangeSize < len(body) {
		return ErrTrailing
	}
	rs := d.Ranges[:0]
	if cap(rs) < count {
		rs = make([]Range, 0, count)
	}
	for i := range count {
		p := body[i*rangeSize:]
		rs = append(rs, Range{First: be.Uint64(p), Last: be.Uint64(p[8:])})
	}
	d.Ranges = rs
	if badRange(rs) >= 0 {
		return ErrRange
	}
	return nil
}
