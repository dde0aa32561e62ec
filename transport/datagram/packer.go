package datagram

import "fmt"

// Packer batches the records of one stream into DATA datagrams of at most a
// size limit, so many small events share one datagram and one sequence
// number. It copies each record when it is added; the caller may reuse its
// buffer afterwards. A Packer is not safe for concurrent use.
//
// Typical use by a stream sender:
//
//	if err := p.Add(rec); errors.Is(err, datagram.ErrFull) {
//		out, _ = p.Flush(out[:0], &hdr) // hdr.Seq = next sequence number
//		err = p.Add(rec)
//	}
type Packer struct {
	limit int
	count int
	// buf holds room for the header and count, then the encoded records.
	buf []byte
}

// NewPacker returns a Packer whose datagrams are at most limit bytes
// (header included). The limit must leave room for a 1 byte record and must
// not exceed MaxDatagramSize.
func NewPacker(limit int) (*Packer, error) {
	if DataCapacity(limit) < 1 || limit > MaxDatagramSize {
		return nil, fmt.Errorf("%w: packer limit %d outside [%d, %d]",
			ErrTooLarge, limit, HeaderSize+countSize+RecordOverhead+1, MaxDatagramSize)
	}
	p := &Packer{limit: limit, buf: make([]byte, HeaderSize+countSize, min(limit, DefaultDatagramSize))}
	return p, nil
}

// Limit returns the largest datagram the Packer produces.
func (p *Packer) Limit() int { return p.limit }

// Len returns the number of records waiting to be flushed.
func (p *Packer) Len() int { return p.count }

// Size returns the size of the datagram Flush would produce now.
func (p *Packer) Size() int { return len(p.buf) }

// Fits reports whether a record of n bytes fits beside the waiting records.
func (p *Packer) Fits(n int) bool {
	return n > 0 && p.count < MaxRecords && len(p.buf)+RecordOverhead+n <= p.limit
}

// Add appends a copy of rec to the waiting records. It returns ErrFull if
// rec does not fit beside them (flush, then add again),
// or ErrRecord if rec is empty or larger than DataCapacity(Limit()).
func (p *Packer) Add(rec []byte) error {
	if len(rec) == 0 || len(rec) > DataCapacity(p.limit) {
		return fmt.Errorf("%w: %d bytes, capacity %d", ErrRecord, len(rec), DataCapacity(p.limit))
	}
	if !p.Fits(len(rec)) {
		return ErrFull // unwrapped: a normal signal on the hot path, no allocation
	}
	p.buf = be.AppendUint32(p.buf, uint32(len(rec)))
	p.buf = append(p.buf, rec...)
	p.count++
	return nil
}

// Flush appends a DATA datagram holding the waiting records to dst and
// empties the Packer. The header is taken from hdr: Stream, Seq and Flags
// (only FlagRepair may be set); hdr.Kind must be KindData or zero and
// hdr.Records is ignored. It returns an error wrapping ErrEmpty if no record
// waits; on error dst is returned unchanged and the records keep waiting.
func (p *Packer) Flush(dst []byte, hdr *Datagram) ([]byte, error) {
	if p.count == 0 {
		return dst, fmt.Errorf("%w: nothing to flush", ErrEmpty)
	}
	h := Datagram{Kind: hdr.Kind, Flags: hdr.Flags, KeyID: hdr.KeyID, Stream: hdr.Stream, Seq: hdr.Seq}
	if h.Kind == 0 {
		h.Kind = KindData
	}
	if h.Kind != KindData {
		return dst, fmt.Errorf("%w: packer writes DATA, not %v", ErrKind, h.Kind)
	}
	if err := checkHeader(&h); err != nil {
		return dst, err
	}
	appendHeader(p.buf[:0], &h)
	be.PutUint16(p.buf[HeaderSize:], uint16(p.count))
	dst = append(dst, p.buf...)
	p.Reset()
	return dst, nil
}

// Reset drops the waiting records.
func (p *Packer) Reset() {
	p.buf = p.buf[:HeaderSize+countSize]
	p.count = 0
}
