package group

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/rsbd/rsbd/transport/datagram"
)

// ErrMalformed is wrapped by every error DecodePeerState returns and by
// AppendPeerState for a state that has no canonical encoding.
var ErrMalformed = errors.New("group: malformed peer state")

// peerStateFormat is the first byte of an encoded peer state. Bump it for an
// incompatible layout; decoders refuse formats they do not know.
const peerStateFormat = 1

// Address family bytes of the encoded unicast address.
const (
	familyNone = 0
	familyIPv4 = 4
	familyIPv6 = 6
)

// peerStateFixedLen is the encoded size of a state without address bytes and
// groups: format, version, instance, family, port, group count.
const peerStateFixedLen = 1 + 8 + 16 + 1 + 2 + 4

// PeerState is what a peer announces about itself: the groups it wants, its
// instance id and its unicast data address, under a version that grows with
// every change.
type PeerState struct {
	// Version orders the states of one instance; a higher one replaces a lower.
	Version uint64
	// Instance identifies the run of the peer's daemon.
	Instance datagram.InstanceID
	// Addr is the peer's unicast UDP data address; zero if it has none.
	Addr netip.AddrPort
	// Groups are the wanted groups, strictly ascending (see SortGroups).
	Groups []GroupID
}

// EncodedLen returns the size of the encoding of st.
func (st *PeerState) EncodedLen() int {
	n := peerStateFixedLen + len(st.Groups)*len(GroupID{})
	switch {
	case st.Addr.Addr().Unmap().Is4():
		n += 4
	case st.Addr.Addr().Is6():
		n += 16
	}
	return n
}

// AppendPeerState appends the binary encoding of st to dst. It fails (with
// ErrMalformed) when the groups are not strictly ascending or exceed
// MaxEncodedGroups. Layout, big-endian: format (1), version (8), instance
// (16), address family (1: 0 none, 4, 6), address (0, 4 or 16), port (2),
// group count (4), groups (16 each).
func AppendPeerState(dst []byte, st *PeerState) ([]byte, error) {
	if len(st.Groups) > MaxEncodedGroups {
		return dst, fmt.Errorf("%w: %d groups, limit %d", ErrMalformed, len(st.Groups), MaxEncodedGroups)
	}
	if !groupsAscending(st.Groups) {
		return dst, fmt.Errorf("%w: groups not strictly ascending", ErrMalformed)
	}
	dst = slices.Grow(dst, st.EncodedLen())
	dst = append(dst, peerStateFormat)
	dst = binary.BigEndian.AppendUint64(dst, st.Version)
	dst = append(dst, st.Instance[:]...)
	dst = appendAddrPort(dst, st.Addr)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(st.Groups)))
	for i := range st.Groups {
		dst = append(dst, st.Groups[i][:]...)
	}
	return dst, nil
}

// appendAddrPort appends family, address and port of ap.
func appendAddrPort(dst []byte, ap netip.AddrPort) []byte {
	a := ap.Addr().Unmap()
	switch {
	case a.Is4():
		b := a.As4()
		dst = append(dst, familyIPv4)
		dst = append(dst, b[:]...)
	case a.Is6():
		b := a.As16()
		dst = append(dst, familyIPv6)
		dst = append(dst, b[:]...)
	default:
		return append(dst, familyNone, 0, 0)
	}
	return binary.BigEndian.AppendUint16(dst, ap.Port())
}

// DecodePeerState decodes a state encoded by AppendPeerState. It checks every
// length before reading, refuses more than MaxEncodedGroups groups, groups
// that are not strictly ascending and trailing bytes, and never panics. The
// result does not alias b.
func DecodePeerState(b []byte) (PeerState, error) {
	var st PeerState
	if len(b) < 1+8+16+1 {
		return st, fmt.Errorf("%w: %d bytes, header needs %d", ErrMalformed, len(b), 1+8+16+1)
	}
	if b[0] != peerStateFormat {
		return st, fmt.Errorf("%w: unknown format %d", ErrMalformed, b[0])
	}
	st.Version = binary.BigEndian.Uint64(b[1:9])
	copy(st.Instance[:], b[9:25])
	addr, rest, err := decodeAddrPort(b[25:])
	if err != nil {
		return PeerState{}, err
	}
	st.Addr = addr
	if st.Groups, rest, err = decodeGroupList(rest); err != nil {
		return PeerState{}, err
	}
	if len(rest) != 0 {
		return PeerState{}, fmt.Errorf("%w: %d bytes after the groups", ErrMalformed, len(rest))
	}
	if !groupsAscending(st.Groups) {
		return PeerState{}, fmt.Errorf("%w: groups not strictly ascending", ErrMalformed)
	}
	return st, nil
}

// decodeAddrPort decodes family, address and port and returns the rest of b.
func decodeAddrPort(b []byte) (netip.AddrPort, []byte, error) {
	var a netip.Addr
	if len(b) == 0 {
		return netip.AddrPort{}, nil, fmt.Errorf("%w: truncated address family", ErrMalformed)
	}
	switch b[0] {
	case familyNone:
		b = b[1:]
	case familyIPv4:
		if len(b) < 1+4 {
			return netip.AddrPort{}, nil, fmt.Errorf("%w: truncated IPv4 address", ErrMalformed)
		}
		a = netip.AddrFrom4([4]byte(b[1:5]))
		b = b[5:]
	case familyIPv6:
		if len(b) < 1+16 {
			return netip.AddrPort{}, nil, fmt.Errorf("%w: truncated IPv6 address", ErrMalformed)
		}
		a = netip.AddrFrom16([16]byte(b[1:17]))
		if a.Is4In6() {
			return netip.AddrPort{}, nil, fmt.Errorf("%w: IPv4-mapped address under IPv6 family", ErrMalformed)
		}
		b = b[17:]
	default:
		return netip.AddrPort{}, nil, fmt.Errorf("%w: unknown address family %d", ErrMalformed, b[0])
	}
	if len(b) < 2 {
		return netip.AddrPort{}, nil, fmt.Errorf("%w: truncated port", ErrMalformed)
	}
	port := binary.BigEndian.Uint16(b)
	if !a.IsValid() {
		if port != 0 {
			return netip.AddrPort{}, nil, fmt.Errorf("%w: port %d without address", ErrMalformed, port)
		}
		return netip.AddrPort{}, b[2:], nil
	}
	return netip.AddrPortFrom(a, port), b[2:], nil
}

// groupsAscending reports whether ids are strictly ascending.
func groupsAscending(ids []GroupID) bool {
	for i := 1; i < len(ids); i++ {
		if CompareIDs(ids[i-1], ids[i]) >= 0 {
			return false
		}
	}
	return true
}

// CompareIDs orders group ids as SortGroups does (byte-wise ascending).
func CompareIDs(a, b GroupID) int {
	if c := cmp.Compare(binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8])); c != 0 {
		return c
	}
	return cmp.Compare(binary.BigEndian.Uint64(a[8:]), binary.BigEndian.Uint64(b[8:]))
}

// SortGroups sorts ids in place, removes duplicates and returns the result
// (a prefix of ids): the canonical order PeerState.Groups requires.
func SortGroups(ids []GroupID) []GroupID {
	if len(ids) < sortKeysMin {
		slices.SortFunc(ids, CompareIDs)
		return slices.Compact(ids)
	}
	// Compare as two words each, converted once rather than per compare.
	keys := make([]idKey, len(ids))
	for i, id := range ids {
		keys[i] = idKey{binary.BigEndian.Uint64(id[:8]), binary.BigEndian.Uint64(id[8:])}
	}
	slices.SortFunc(keys, func(a, b idKey) int {
		if a.hi != b.hi {
			return cmp.Compare(a.hi, b.hi)
		}
		return cmp.Compare(a.lo, b.lo)
	})
	for i, k := range keys {
		binary.BigEndian.PutUint64(ids[i][:8], k.hi)
		binary.BigEndian.PutUint64(ids[i][8:], k.lo)
	}
	return slices.Compact(ids)
}

// idKey is a group id as two big-endian words, ordered like the id.
type idKey struct{ hi, lo uint64 }

// sortKeysMin is the length from which SortGroups sorts converted keys.
const sortKeysMin = 64
