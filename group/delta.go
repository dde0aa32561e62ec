package group

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/rsbd/rsbd/transport/datagram"
)

// peerDeltaFormat is the first byte of an encoded peer delta. Bump it for an
// incompatible layout; decoders refuse formats they do not know.
const peerDeltaFormat = 1

// peerDeltaFixedLen is the encoded size of a delta without address bytes
// and groups: format, base, version, instance, family, port, two counts.
const peerDeltaFixedLen = 1 + 8 + 8 + 16 + 1 + 2 + 4 + 4

// PeerDelta is the change of a peer's state from version Base to Version:
// the state at Version is the one at Base with Added added and Removed
// taken away. A peer pushes it instead of its whole state to a member that
// confirmed Base, so that a change costs what changed, not what is held.
type PeerDelta struct {
	// Base is the version the change starts from; Version the one it makes.
	Base, Version uint64
	// Instance identifies the run of the peer's daemon.
	Instance datagram.InstanceID
	// Addr is the peer's unicast UDP data address at Version.
	Addr netip.AddrPort
	// Added and Removed are strictly ascending and disjoint.
	Added, Removed []GroupID
}

// ErrDeltaBase is returned by PeerDelta.Apply when the state is not the one
// the delta starts from: the receiver needs the whole state instead.
var ErrDeltaBase = errors.New("group: delta does not start from the held state")

// AppendPeerDelta appends the binary encoding of d to dst. It fails (with
// ErrMalformed) when Version does not follow Base, the lists are not
// strictly ascending or together exceed MaxEncodedGroups. Layout,
// big-endian: format (1), base (8), version (8), instance (16), address
// family, address and port as in a peer state, added count (4), added ids
// (16 each), removed count (4), removed ids.
func AppendPeerDelta(dst []byte, d *PeerDelta) ([]byte, error) {
	if err := d.check(); err != nil {
		return dst, err
	}
	dst = slices.Grow(dst, peerDeltaFixedLen+16+(len(d.Added)+len(d.Removed))*len(GroupID{}))
	dst = append(dst, peerDeltaFormat)
	dst = binary.BigEndian.AppendUint64(dst, d.Base)
	dst = binary.BigEndian.AppendUint64(dst, d.Version)
	dst = append(dst, d.Instance[:]...)
	dst = appendAddrPort(dst, d.Addr)
	for _, ids := range [][]GroupID{d.Added, d.Removed} {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(ids)))
		for i := range ids {
			dst = append(dst, ids[i][:]...)
		}
	}
	return dst, nil
}

// check reports why d has no valid encoding.
func (d *PeerDelta) check() error {
	switch {
	case d.Version <= d.Base:
		return fmt.Errorf("%w: delta from version %d to %d", ErrMalformed, d.Base, d.Version)
	case len(d.Added)+len(d.Removed) > MaxEncodedGroups:
		return fmt.Errorf("%w: %d changed groups, limit %d", ErrMalformed, len(d.Added)+len(d.Removed), MaxEncodedGroups)
	case !groupsAscending(d.Added) || !groupsAscending(d.Removed):
		return fmt.Errorf("%w: delta groups not strictly ascending", ErrMalformed)
	}
	return nil
}

// DecodePeerDelta decodes a delta encoded by AppendPeerDelta. It checks
// every length before reading, refuses what AppendPeerDelta refuses and
// trailing bytes, and never panics. The result does not alias b.
func DecodePeerDelta(b []byte) (PeerDelta, error) {
	var d PeerDelta
	if len(b) < 1+8+8+16 {
		return d, fmt.Errorf("%w: delta of %d bytes, header needs %d", ErrMalformed, len(b), 1+8+8+16)
	}
	if b[0] != peerDeltaFormat {
		return d, fmt.Errorf("%w: unknown delta format %d", ErrMalformed, b[0])
	}
	d.Base = binary.BigEndian.Uint64(b[1:9])
	d.Version = binary.BigEndian.Uint64(b[9:17])
	copy(d.Instance[:], b[17:33])
	addr, rest, err := decodeAddrPort(b[33:])
	if err != nil {
		return PeerDelta{}, err
	}
	d.Addr = addr
	if d.Added, rest, err = decodeGroupList(rest); err != nil {
		return PeerDelta{}, err
	}
	if d.Removed, rest, err = decodeGroupList(rest); err != nil {
		return PeerDelta{}, err
	}
	if len(rest) != 0 {
		return PeerDelta{}, fmt.Errorf("%w: %d bytes after the delta", ErrMalformed, len(rest))
	}
	if err := d.check(); err != nil {
		return PeerDelta{}, err
	}
	return d, nil
}

// decodeGroupList decodes a count (4) and that many group ids.
func decodeGroupList(b []byte) ([]GroupID, []byte, error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("%w: truncated group count", ErrMalformed)
	}
	n := binary.BigEndian.Uint32(b)
	b = b[4:]
	if n > MaxEncodedGroups {
		return nil, nil, fmt.Errorf("%w: %d groups, limit %d", ErrMalformed, n, MaxEncodedGroups)
	}
	size := int(n) * len(GroupID{})
	if len(b) < size {
		return nil, nil, fmt.Errorf("%w: %d group bytes for %d groups", ErrMalformed, len(b), n)
	}
	var ids []GroupID
	if n > 0 {
		ids = make([]GroupID, n)
		for i := range ids {
			copy(ids[i][:], b[i*len(GroupID{}):])
		}
	}
	return ids, b[size:], nil
}

// Apply returns the state d makes of st. st must be the state d starts
// from (same instance, version Base), every added group absent from it and
// every removed one present; otherwise Apply returns ErrDeltaBase (or
// ErrMalformed) and the receiver needs the whole state. st is not changed.
func (d *PeerDelta) Apply(st PeerState) (PeerState, error) {
	if st.Instance != d.Instance || st.Version != d.Base {
		return PeerState{}, ErrDeltaBase
	}
	if err := d.check(); err != nil {
		return PeerState{}, err
	}
	out := make([]GroupID, 0, len(st.Groups)+len(d.Added))
	add, rem := d.Added, d.Removed
	for _, id := range st.Groups {
		for len(add) > 0 && CompareIDs(add[0], id) < 0 {
			out, add = append(out, add[0]), add[1:]
		}
		if len(add) > 0 && add[0] == id {
			return PeerState{}, fmt.Errorf("%w: added group already held", ErrDeltaBase)
		}
		if len(rem) > 0 && CompareIDs(rem[0], id) < 0 {
			return PeerState{}, fmt.Errorf("%w: removed group not held", ErrDeltaBase)
		}
		if len(rem) > 0 && rem[0] == id {
			rem = rem[1:]
			continue
		}
		out = append(out, id)
	}
	if len(rem) > 0 {
		return PeerState{}, fmt.Errorf("%w: removed group not held", ErrDeltaBase)
	}
	out = append(out, add...)
	if len(out) > MaxEncodedGroups {
		return PeerState{}, fmt.Errorf("%w: %d groups, limit %d", ErrMalformed, len(out), MaxEncodedGroups)
	}
	return PeerState{Version: d.Version, Instance: d.Instance, Addr: d.Addr, Groups: out}, nil
}
