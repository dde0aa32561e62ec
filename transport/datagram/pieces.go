package datagram

// RecordCount returns the number of records of a DATA datagram, given as
// Records or as Pieces.
func (d *Datagram) RecordCount() int { return len(d.Records) + len(d.Pieces) }

// RecordLen returns the length of record i (0 <= i < RecordCount()).
func (d *Datagram) RecordLen(i int) int {
	if i < len(d.Records) {
		return len(d.Records[i])
	}
	return piecesLen(d.Pieces[i-len(d.Records)])
}

// RecordBytes returns the summed length of the datagram's records.
func (d *Datagram) RecordBytes() int {
	n := 0
	for _, r := range d.Records {
		n += len(r)
	}
	for _, ps := range d.Pieces {
		n += piecesLen(ps)
	}
	return n
}

// piecesLen returns the length of a record given in pieces.
func piecesLen(ps [][]byte) int {
	n := 0
	for _, p := range ps {
		n += len(p)
	}
	return n
}
