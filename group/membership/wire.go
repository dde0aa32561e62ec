package membership

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/transport/datagram"
)

// ErrMalformed is wrapped by every error of the decoders of node metadata
// and interest messages.
var ErrMalformed = errors.New("membership: malformed message")

// Kinds of the user messages this package sends through memberlist.
// Wire values are fixed forever: ONLY APPEND TO THIS LIST.
const (
	// msgState carries one peer's interest: name length (1), name, and a
	// state encoded by group.AppendPeerState. Sent by broadcast or, when
	// larger than MaxBroadcastBytes, over TCP to every member.
	msgState byte = 1
	// msgTable is the push/pull state: a count (4) of entries, each a name
	// length (1), name, state length (4) and an encoded state.
	msgTable byte = 2
	// msgLeaving announces that a node is about to leave on purpose: name
	// length (1), name, instance (16). Sent straight to every member before
	// memberlist's leave so they report a leave rather than a failure.
	msgLeaving byte = 3
	// msgStatePush is a msgState sent straight to each member by PushLocal;
	// the receiver applies it and answers with a msgStateAck.
	msgStatePush byte = 4
	// msgStateAck confirms a pushed state: name length (1), the acking
	// node's name, the state owner's instance (16) and the state's version
	// (8, big-endian).
	msgStateAck byte = 5
	// msgStateDelta is PushLocal's change of the sender's state since a
	// version the receiver confirmed: name length (1), name, and a delta
	// encoded by group.AppendPeerDelta. The receiver applies it to exactly
	// that version and confirms with a msgStateAck, or answers with a
	// msgStateNeedFull.
	msgStateDelta byte = 6
	// msgStateNeedFull asks a delta's sender for its whole state: name
	// length (1), the asking node's name, the sender's instance (16).
	msgStateNeedFull byte = 7
)

// metaFormat is the first byte of the node metadata; bump it for an
// incompatible layout.
const metaFormat = 1

// Node metadata flags.
const (
	// metaLeaving marks a node that is about to leave on purpose, so peers
	// report its departure as a leave rather than a failure.
	metaLeaving byte = 1 << 0
)

// metaLen is the exact size of the node metadata (well under memberlist's
// MetaMaxSize of 512): format, flags, instance, address family, 16 address
// bytes (IPv4 uses the first 4), port.
const metaLen = 1 + 1 + 16 + 1 + 16 + 2

// nodeMeta is what a node announces in its memberlist metadata.
type nodeMeta struct {
	leaving  bool
	instance datagram.InstanceID
	dataAddr netip.AddrPort
}

// encodeMeta returns the metadata bytes of m.
func encodeMeta(m nodeMeta) []byte {
	b := make([]byte, metaLen)
	b[0] = metaFormat
	if m.leaving {
		b[1] |= metaLeaving
	}
	copy(b[2:18], m.instance[:])
	a := m.dataAddr.Addr().Unmap()
	switch {
	case a.Is4():
		b[18] = 4
		a4 := a.As4()
		copy(b[19:23], a4[:])
	case a.Is6():
		b[18] = 6
		a16 := a.As16()
		copy(b[19:35], a16[:])
	}
	if b[18] != 0 {
		binary.BigEndian.PutUint16(b[35:], m.dataAddr.Port())
	}
	return b
}

// decodeMeta decodes node metadata; it never panics.
func decodeMeta(b []byte) (nodeMeta, error) {
	var m nodeMeta
	if len(b) != metaLen {
		return m, fmt.Errorf("%w: metadata of %d bytes, want %d", ErrMalformed, len(b), metaLen)
	}
	if b[0] != metaFormat {
		return m, fmt.Errorf("%w: metadata format %d", ErrMalformed, b[0])
	}
	if b[1]&^metaLeaving != 0 {
		return m, fmt.Errorf("%w: unknown metadata flags %#x", ErrMalformed, b[1])
	}
	m.leaving = b[1]&metaLeaving != 0
	copy(m.instance[:], b[2:18])
	port := binary.BigEndian.Uint16(b[35:])
	switch b[18] {
	case 0:
		if port != 0 || !allZero(b[19:35]) {
			return nodeMeta{}, fmt.Errorf("%w: address bytes without address family", ErrMalformed)
		}
	case 4:
		if !allZero(b[23:35]) {
			return nodeMeta{}, fmt.Errorf("%w: padding after IPv4 address", ErrMalformed)
		}
		m.dataAddr = netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[19:23])), port)
	case 6:
		a := netip.AddrFrom16([16]byte(b[19:35]))
		if a.Is4In6() {
			return nodeMeta{}, fmt.Errorf("%w: IPv4-mapped address under IPv6 family", ErrMalformed)
		}
		m.dataAddr = netip.AddrPortFrom(a, port)
	default:
		return nodeMeta{}, fmt.Errorf("%w: address family %d", ErrMalformed, b[18])
	}
	return m, nil
}

// allZero reports whether every byte of b is zero.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// appendStateMsg appends a msgState for peer name with state st.
func appendStateMsg(dst []byte, name string, st *group.PeerState) ([]byte, error) {
	if name == "" || len(name) > MaxNodeNameLen {
		return dst, fmt.Errorf("%w: node name of %d bytes", ErrMalformed, len(name))
	}
	dst = append(dst, msgState, byte(len(name)))
	dst = append(dst, name...)
	return group.AppendPeerState(dst, st)
}

// decodeStateMsg decodes the body of a msgState (after the kind byte).
func decodeStateMsg(b []byte) (string, group.PeerState, error) {
	name, rest, err := decodeName(b)
	if err != nil {
		return "", group.PeerState{}, err
	}
	st, err := group.DecodePeerState(rest)
	if err != nil {
		return "", group.PeerState{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return name, st, nil
}

// appendDeltaMsg appends a msgStateDelta for peer name with delta d.
func appendDeltaMsg(dst []byte, name string, d *group.PeerDelta) ([]byte, error) {
	if name == "" || len(name) > MaxNodeNameLen {
		return dst, fmt.Errorf("%w: node name of %d bytes", ErrMalformed, len(name))
	}
	dst = append(dst, msgStateDelta, byte(len(name)))
	dst = append(dst, name...)
	return group.AppendPeerDelta(dst, d)
}

// decodeDeltaMsg decodes the body of a msgStateDelta (after the kind byte).
func decodeDeltaMsg(b []byte) (string, group.PeerDelta, error) {
	name, rest, err := decodeName(b)
	if err != nil {
		return "", group.PeerDelta{}, err
	}
	d, err := group.DecodePeerDelta(rest)
	if err != nil {
		return "", group.PeerDelta{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return name, d, nil
}

// appendNeedFullMsg appends a msgStateNeedFull from node name about the
// state of instance.
func appendNeedFullMsg(dst []byte, name string, instance datagram.InstanceID) ([]byte, error) {
	if name == "" || len(name) > MaxNodeNameLen {
		return dst, fmt.Errorf("%w: node name of %d bytes", ErrMalformed, len(name))
	}
	dst = append(dst, msgStateNeedFull, byte(len(name)))
	dst = append(dst, name...)
	return append(dst, instance[:]...), nil
}

// decodeNeedFullMsg decodes the body of a msgStateNeedFull.
func decodeNeedFullMsg(b []byte) (string, datagram.InstanceID, error) {
	var inst datagram.InstanceID
	name, rest, err := decodeName(b)
	if err != nil {
		return "", inst, err
	}
	if len(rest) != len(inst) {
		return "", inst, fmt.Errorf("%w: need-full of %d bytes after the name", ErrMalformed, len(rest))
	}
	copy(inst[:], rest)
	return name, inst, nil
}

// appendAckMsg appends a msgStateAck from node name for the state version
// of instance.
func appendAckMsg(dst []byte, name string, instance datagram.InstanceID, version uint64) ([]byte, error) {
	if name == "" || len(name) > MaxNodeNameLen {
		return dst, fmt.Errorf("%w: node name of %d bytes", ErrMalformed, len(name))
	}
	dst = append(dst, msgStateAck, byte(len(name)))
	dst = append(dst, name...)
	dst = append(dst, instance[:]...)
	return binary.BigEndian.AppendUint64(dst, version), nil
}

// decodeAckMsg decodes the body of a msgStateAck (after the kind byte).
func decodeAckMsg(b []byte) (string, datagram.InstanceID, uint64, error) {
	var inst datagram.InstanceID
	name, rest, err := decodeName(b)
	if err != nil {
		return "", inst, 0, err
	}
	if len(rest) != len(inst)+8 {
		return "", inst, 0, fmt.Errorf("%w: ack of %d bytes after the name", ErrMalformed, len(rest))
	}
	copy(inst[:], rest)
	return name, inst, binary.BigEndian.Uint64(rest[len(inst):]), nil
}

// appendLeavingMsg appends a msgLeaving for node name and its instance.
func appendLeavingMsg(dst []byte, name string, instance datagram.InstanceID) ([]byte, error) {
	if name == "" || len(name) > MaxNodeNameLen {
		return dst, fmt.Errorf("%w: node name of %d bytes", ErrMalformed, len(name))
	}
	dst = append(dst, msgLeaving, byte(len(name)))
	dst = append(dst, name...)
	return append(dst, instance[:]...), nil
}

// decodeLeavingMsg decodes the body of a msgLeaving (after the kind byte).
func decodeLeavingMsg(b []byte) (string, datagram.InstanceID, error) {
	var inst datagram.InstanceID
	name, rest, err := decodeName(b)
	if err != nil {
		return "", inst, err
	}
	if len(rest) != len(inst) {
		return "", inst, fmt.Errorf("%w: leaving message of %d instance bytes", ErrMalformed, len(rest))
	}
	copy(inst[:], rest)
	return name, inst, nil
}

// decodeName decodes a length-prefixed node name and returns the rest of b.
func decodeName(b []byte) (string, []byte, error) {
	if len(b) < 1 || b[0] == 0 || len(b) < 1+int(b[0]) {
		return "", nil, fmt.Errorf("%w: bad node name", ErrMalformed)
	}
	n := int(b[0])
	return string(b[1 : 1+n]), b[1+n:], nil
}

// tableWriter builds a msgTable within a byte budget.
type tableWriter struct {
	buf     []byte
	count   uint32
	limit   int
	skipped int
}

// newTableWriter starts a table of at most limit bytes.
func newTableWriter(limit int) *tableWriter {
	return &tableWriter{buf: append(make([]byte, 0, 256), msgTable, 0, 0, 0, 0), limit: limit}
}

// add appends the entry of peer name, or counts it as skipped when it does
// not fit the budget or cannot be encoded.
func (w *tableWriter) add(name string, st *group.PeerState) {
	need := 1 + len(name) + 4 + st.EncodedLen()
	if name == "" || len(name) > MaxNodeNameLen || len(w.buf)+need > w.limit {
		w.skipped++
		return
	}
	start := len(w.buf)
	w.buf = append(w.buf, byte(len(name)))
	w.buf = append(w.buf, name...)
	w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(st.EncodedLen()))
	var err error
	if w.buf, err = group.AppendPeerState(w.buf, st); err != nil {
		w.buf = w.buf[:start]
		w.skipped++
		return
	}
	w.count++
}

// bytes returns the finished table.
func (w *tableWriter) bytes() []byte {
	binary.BigEndian.PutUint32(w.buf[1:5], w.count)
	return w.buf
}

// tableEntry is one decoded entry of a msgTable; state aliases the input.
type tableEntry struct {
	name  string
	state []byte
}

// decodeTable decodes the body of a msgTable (after the kind byte), calling
// fn for each entry in order. It checks every length against the input
// before use, refuses more than maxEntries entries and trailing bytes, and
// stops at the first error (entries before it have been passed to fn).
func decodeTable(b []byte, maxEntries int, fn func(tableEntry)) error {
	if len(b) < 4 {
		return fmt.Errorf("%w: truncated table count", ErrMalformed)
	}
	count := binary.BigEndian.Uint32(b)
	if uint64(count) > uint64(maxEntries) {
		return fmt.Errorf("%w: table of %d entries, limit %d", ErrMalformed, count, maxEntries)
	}
	b = b[4:]
	for i := uint32(0); i < count; i++ {
		name, rest, err := decodeName(b)
		if err != nil {
			return err
		}
		if len(rest) < 4 {
			return fmt.Errorf("%w: truncated state length", ErrMalformed)
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(n) > uint64(len(rest)) {
			return fmt.Errorf("%w: state of %d bytes, %d left", ErrMalformed, n, len(rest))
		}
		fn(tableEntry{name: name, state: rest[:n:n]})
		b = rest[n:]
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes after table", ErrMalformed, len(b))
	}
	return nil
}
