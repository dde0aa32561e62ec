package datagram

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
)

// Sealing parameters.
const (
	// KeySize is the AES-256 key size.
	KeySize = 32
	// nonceSize is the AES-GCM nonce carried before the ciphertext.
	nonceSize = 12
	// tagSize is the AES-GCM authentication tag after the ciphertext.
	tagSize = 16
	// SealOverhead is what sealing adds to a datagram: nonce and tag.
	// Subtract it from the configured datagram size before packing.
	SealOverhead = nonceSize + tagSize
	// MaxLabelSize bounds the cluster label.
	MaxLabelSize = 255
)

// Errors of sealing and opening.
var (
	// ErrUnknownKey means a sealed datagram names a key id the Sealer does
	// not hold.
	ErrUnknownKey = errors.New("datagram: unknown key id")
	// ErrAuth means a sealed datagram failed authentication: forged,
	// corrupted, or sealed for another cluster label.
	ErrAuth = errors.New("datagram: authentication failed")
	// ErrKey means a key, key id or label given to NewSealer is invalid.
	ErrKey = errors.New("datagram: invalid key")
)

// Sealer seals and opens datagrams with AES-256-GCM. It holds a keyring:
// the primary key seals, every key opens, so keys can be rotated across a
// cluster without downtime. The header stays in clear and is authenticated
// together with the cluster label, so datagrams of another cluster (another
// label) never open. A sealed datagram is the header (FlagSealed set, KeyID
// the key's id), a random 12 byte nonce, then the ciphertext of the body
// and the 16 byte tag.
//
// Random nonces limit a key to about 2^32 sealed datagrams; rotate keys
// well before that. Sealing does not detect replays: the receive windows of
// the stream machines do. A Sealer is safe for concurrent use.
type Sealer struct {
	primary uint8
	keys    [256]cipher.AEAD
	// prefix is the label part of the associated data: length byte, label.
	prefix []byte
}

// NewSealer returns a Sealer for the cluster label holding keys by id (1..255;
// 0 means "not sealed" on the wire), sealing with keys[primary].
func NewSealer(label string, primary uint8, keys map[uint8][]byte) (*Sealer, error) {
	if len(label) > MaxLabelSize {
		return nil, fmt.Errorf("%w: label of %d bytes", ErrKey, len(label))
	}
	if keys[primary] == nil {
		return nil, fmt.Errorf("%w: no primary key %d", ErrKey, primary)
	}
	s := &Sealer{primary: primary, prefix: append([]byte{byte(len(label))}, label...)}
	for id, k := range keys {
		if id == 0 || len(k) != KeySize {
			return nil, fmt.Errorf("%w: key %d of %d bytes", ErrKey, id, len(k))
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKey, err)
		}
		if s.keys[id], err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKey, err)
		}
	}
	return s, nil
}

// Seal appends the sealed form of the plaintext datagram b (as Append writes
// it) to dst. dst and b must not overlap.
func (s *Sealer) Seal(dst, b []byte) ([]byte, error) {
	if len(b) < HeaderSize {
		return dst, ErrShort
	}
	if Flags(b[2])&FlagSealed != 0 || b[4] != 0 {
		return dst, fmt.Errorf("%w: already sealed", ErrSealed)
	}
	if len(b)+SealOverhead > MaxDatagramSize {
		return dst, fmt.Errorf("%w: %d bytes sealed", ErrTooLarge, len(b)+SealOverhead)
	}
	start := len(dst)
	dst = append(dst, b[:HeaderSize]...)
	hdr := dst[start:]
	hdr[2] |= byte(FlagSealed)
	hdr[4] = s.primary
	dst = append(dst, make([]byte, nonceSize)...)
	nonce := dst[start+HeaderSize:]
	if _, err := rand.Read(nonce); err != nil {
		return dst[:start], err
	}
	aad := aadPool.Get().(*aadBuf)
	defer aadPool.Put(aad)
	return s.keys[s.primary].Seal(dst, nonce, b[HeaderSize:], aad.build(s.prefix, dst[start:])), nil
}

// Open authenticates and decrypts the sealed datagram b and appends the
// plaintext datagram (FlagSealed cleared, KeyID 0) to dst, ready for Decode.
// dst and b must not overlap. Nothing is allocated before authentication
// beyond dst's growth. Errors are ErrShort, ErrTooLarge, ErrVersion,
// ErrFlags, ErrUnknownKey and ErrAuth.
func (s *Sealer) Open(dst, b []byte) ([]byte, error) {
	if len(b) < HeaderSize+SealOverhead {
		return dst, ErrShort
	}
	if len(b) > MaxDatagramSize {
		return dst, ErrTooLarge
	}
	if b[0] != Version {
		return dst, ErrVersion
	}
	if Flags(b[2])&FlagSealed == 0 {
		return dst, fmt.Errorf("%w: not sealed", ErrFlags)
	}
	aead := s.keys[b[4]]
	if aead == nil {
		return dst, ErrUnknownKey
	}
	aad := aadPool.Get().(*aadBuf)
	defer aadPool.Put(aad)
	start := len(dst)
	dst = append(dst, b[:HeaderSize]...)
	dst[start+2] &^= byte(FlagSealed)
	dst[start+4] = 0
	nonce := b[HeaderSize : HeaderSize+nonceSize]
	out, err := aead.Open(dst, nonce, b[HeaderSize+nonceSize:], aad.build(s.prefix, b))
	if err != nil {
		return dst[:start], ErrAuth
	}
	return out, nil
}

// aadBuf holds the associated data of one operation: label prefix, header.
// Pooled: passed to the AEAD interface it would escape and allocate.
type aadBuf [1 + MaxLabelSize + HeaderSize]byte

var aadPool = sync.Pool{New: func() any { return new(aadBuf) }}

func (a *aadBuf) build(prefix, hdr []byte) []byte {
	return append(append(a[:0], prefix...), hdr[:HeaderSize]...)
}
