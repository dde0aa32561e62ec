package notification

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadUUID is wrapped by errors of ParseUUID and ParseEventID.
var ErrBadUUID = errors.New("notification: malformed UUID")

// EventID identifies an RSB event: the UUID of the sending participant and
// that participant's sequence number (starting at 0, wrapping at 2^32).
// EventIDs are comparable and usable as map keys.
type EventID struct {
	SenderID       [16]byte
	SequenceNumber uint32
}

// UUID returns the event's RSB UUID: the name-based (SHA-1, version 5) UUID
// with the sender id as namespace and the sequence number formatted as 8
// lowercase, zero-padded hex digits as name.
func (id EventID) UUID() [16]byte {
	var name [8]byte
	const digits = "0123456789abcdef"
	for i := range name {
		name[i] = digits[(id.SequenceNumber>>(28-4*uint(i)))&0xf]
	}
	return UUIDv5(id.SenderID, name[:])
}

// String formats the id as "<sender uuid>:<decimal sequence number>", the
// form RSB tools accept for causes; ParseEventID reads it back.
func (id EventID) String() string {
	return FormatUUID(id.SenderID) + ":" + strconv.FormatUint(uint64(id.SequenceNumber), 10)
}

// ParseEventID parses the form produced by EventID.String.
func ParseEventID(s string) (EventID, error) {
	u, seq, ok := strings.Cut(s, ":")
	if !ok {
		return EventID{}, fmt.Errorf("%w: event id %q lacks ':<sequence number>'", ErrBadUUID, s)
	}
	sender, err := ParseUUID(u)
	if err != nil {
		return EventID{}, err
	}
	n, err := strconv.ParseUint(seq, 10, 32)
	if err != nil {
		return EventID{}, fmt.Errorf("%w: event id %q: sequence number: %v", ErrBadUUID, s, err)
	}
	return EventID{SenderID: sender, SequenceNumber: uint32(n)}, nil
}

// UUIDv5 returns the RFC 4122 name-based UUID (SHA-1, version 5) of name in
// namespace ns.
func UUIDv5(ns [16]byte, name []byte) [16]byte {
	h := sha1.New()
	h.Write(ns[:])
	h.Write(name)
	var sum [sha1.Size]byte
	h.Sum(sum[:0])
	var u [16]byte
	copy(u[:], sum[:16])
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u
}

// NewParticipantID returns a random (version 4) UUID for a new participant.
func NewParticipantID() [16]byte {
	var u [16]byte
	// crypto/rand.Read never returns an error (it aborts the program instead).
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u
}

// FormatUUID formats u in the lowercase RFC 4122 form
// xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
func FormatUUID(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return string(b[:])
}

// ParseUUID parses the RFC 4122 string form (36 characters, hyphens after
// the 8th, 12th, 16th and 20th hex digit), in either case.
func ParseUUID(s string) ([16]byte, error) {
	var u [16]byte
	if len(s) != 36 {
		return u, fmt.Errorf("%w: %q has %d characters, want 36", ErrBadUUID, s, len(s))
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return u, fmt.Errorf("%w: %q lacks '-' at position %d", ErrBadUUID, s, i)
			}
			i++
			continue
		}
		hi, ok1 := fromHex(s[i])
		lo, ok2 := fromHex(s[i+1])
		if !ok1 || !ok2 {
			return u, fmt.Errorf("%w: %q has a non-hex character at position %d", ErrBadUUID, s, i)
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	return u, nil
}

func fromHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
