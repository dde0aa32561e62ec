package datagram

import "slices"

// AppendGather is Append for gather writes: it appends d's encoding to segs
// as segments whose concatenation is what Append writes, without copying
// the records of a DATA datagram. The fixed bytes (header, record count and
// length prefixes; all of a datagram of another kind) are appended to dst,
// and the segments alias dst's array as it is on return and d's records:
// neither may change until the segments are written. A later call that
// grows dst leaves earlier segments in the old array, which stays valid.
// On error dst and segs are returned unchanged.
func AppendGather(dst []byte, segs [][]byte, d *Datagram) ([]byte, [][]byte, error) {
	size, err := encodedSize(d)
	if err != nil {
		return dst, segs, err
	}
	if d.Kind != KindData {
		start := len(dst)
		dst = appendEncoded(slices.Grow(dst, size), d)
		return dst, append(segs, dst[start:len(dst):len(dst)]), nil
	}
	start := len(dst)
	dst = slices.Grow(dst, HeaderSize+countSize+RecordOverhead*d.RecordCount())
	dst = appendHeader(dst, d)
	dst = be.AppendUint16(dst, uint16(d.RecordCount()))
	for _, r := range d.Records {
		dst = be.AppendUint32(dst, uint32(len(r)))
		segs = append(segs, dst[start:len(dst):len(dst)], r)
		start = len(dst)
	}
	for _, ps := range d.Pieces {
		dst = be.AppendUint32(dst, uint32(piecesLen(ps)))
		segs = append(segs, dst[start:len(dst):len(dst)])
		for _, p := range ps {
			if len(p) > 0 {
				segs = append(segs, p)
			}
		}
		start = len(dst)
	}
	return dst, segs, nil
}

// GatherSegments is the number of segments AppendGather makes of d (at
// most: empty pieces are left out).
func GatherSegments(d *Datagram) int {
	if d.Kind != KindData {
		return 1
	}
	n := 2 * len(d.Records)
	for _, ps := range d.Pieces {
		n += 1 + len(ps)
	}
	return n
}
