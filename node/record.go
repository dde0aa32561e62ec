package node

import (
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
)

// errRecord is returned for a record that is not a FragmentedNotification.
var errRecord = errors.New("node: malformed FragmentedNotification record")

// appendWhole appends a FragmentedNotification that wraps the serialized
// Notification n unfragmented (num_data_parts 1, data_part 0) — the same
// bytes the fragmentation package produces, without decoding n.
func appendWhole(dst, n []byte) []byte {
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendBytes(dst, n)
	dst = protowire.AppendTag(dst, 2, protowire.VarintType)
	dst = protowire.AppendVarint(dst, 1)
	dst = protowire.AppendTag(dst, 3, protowire.VarintType)
	return protowire.AppendVarint(dst, 0)
}

// wholeSize is the size appendWhole produces for a Notification of n bytes.
func wholeSize(n int) int {
	return protowire.SizeTag(1) + protowire.SizeBytes(n) + 4
}

// unwrapWhole returns the Notification bytes inside record when the record
// is an unfragmented FragmentedNotification (num_data_parts 1, data_part 0),
// and ok=false for any fragment of a split event. The result aliases record.
func unwrapWhole(record []byte) (n []byte, ok bool, err error) {
	var parts, part uint64 = 1, 0
	var haveN bool
	for b := record; len(b) > 0; {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, false, errRecord
		}
		b = b[l:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return nil, false, errRecord
			}
			n, haveN, b = v, true, b[l:]
		case (num == 2 || num == 3) && typ == protowire.VarintType:
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return nil, false, errRecord
			}
			if num == 2 {
				parts = v
			} else {
				part = v
			}
			b = b[l:]
		default:
			l := protowire.ConsumeFieldValue(num, typ, b)
			if l < 0 {
				return nil, false, errRecord
			}
			b = b[l:]
		}
	}
	if !haveN {
		return nil, false, errRecord
	}
	return n, parts == 1 && part == 0, nil
}
