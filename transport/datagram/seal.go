package datagram

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
)

// Sealing parameters: the layout of the seal trailer that follows the
// ciphertext of a sealed datagram (docs/WIRE.md).
const (
	// KeySize is the AES-256 key size.
	KeySize = 32
	// nonceSize is the AES-GCM nonce carried at the end of the trailer.
	nonceSize = 12
	// tagSize is the AES-GCM authentication tag right after the ciphertext.
	tagSize = 16
	// sealCountersSize is the sender's epoch and counter (u64 each),
	// authenticated in clear after the tag.
	sealCountersSize = 16
	// SealOverhead is what sealing adds to a datagram: tag, epoch,
	// counter and nonce. Subtract it from the configured datagram size
	// before packing.
	SealOverhead = tagSize + sealCountersSize + nonceSize
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
	// ErrUnsealed means a datagram arrived in clear where only sealed ones
	// are accepted.
	ErrUnsealed = errors.New("datagram: not sealed")
)

// Key is one key of a keyring: its id on the wire (1..255) and its secret.
type Key struct {
	ID     uint8
	Secret [KeySize]byte
}

// Seal is what the seal trailer of an authentic datagram says of its
// sender: the sender's epoch (one per run of a sender, growing across its
// restarts) and the datagram's counter (growing within the epoch). The
// replay filter (Replay) keys on them.
type Seal struct {
	Epoch, Counter uint64
}

// Sealer seals and opens datagrams with AES-256-GCM. It holds a keyring:
// the primary key seals, every key opens, so keys can be rotated across a
// cluster without downtime. A sealed datagram is the header (FlagSealed
// set, KeyID the key's id) in clear, the ciphertext of the body, the 16
// byte tag, then the trailer: the sender's epoch and counter (u64 each)
// and the random 12 byte nonce. The header, the epoch, the counter and the
// cluster label are authenticated with the body, so datagrams of another
// cluster (another label) never open and no field of a datagram can be
// changed without its key.
//
// Random nonces limit a key to about 2^32 sealed datagrams; rotate keys
// well before that. Sealing does not detect replays: Replay does, on the
// epoch and counter that Open returns. A Sealer is immutable and safe for
// concurrent use; a new keyring is a new Sealer.
type Sealer struct {
	primary uint8
	keys    [256]cipher.AEAD
	ids     []uint8
	// prefix is the label part of the associated data: length byte, label.
	prefix []byte
}

// NewSealer returns a Sealer for the cluster label holding keys, sealing
// with the first. Key ids must be distinct and not 0 (0 means "not sealed"
// on the wire).
func NewSealer(label string, keys []Key) (*Sealer, error) {
	if len(label) > MaxLabelSize {
		return nil, fmt.Errorf("%w: label of %d bytes", ErrKey, len(label))
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no key", ErrKey)
	}
	s := &Sealer{primary: keys[0].ID, prefix: append([]byte{byte(len(label))}, label...)}
	for _, k := range keys {
		if k.ID == 0 || s.keys[k.ID] != nil {
			return nil, fmt.Errorf("%w: key id %d zero or repeated", ErrKey, k.ID)
		}
		block, err := aes.NewCipher(k.Secret[:])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKey, err)
		}
		if s.keys[k.ID], err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKey, err)
		}
		s.ids = append(s.ids, k.ID)
	}
	return s, nil
}

// Primary returns the id of the key that seals.
func (s *Sealer) Primary() uint8 { return s.primary }

// HasKey reports whether the keyring holds key id.
func (s *Sealer) HasKey(id uint8) bool { return s.keys[id] != nil }

// KeyIDs returns the ids of the keys that open, the primary first.
func (s *Sealer) KeyIDs() []uint8 { return append([]uint8(nil), s.ids...) }

// Seal appends the sealed form of the plaintext datagram b (as Append
// writes it) to dst, stamped with the sender's epoch and counter. dst and b
// must not overlap. It allocates nothing beyond dst's growth.
func (s *Sealer) Seal(dst, b []byte, sl Seal) ([]byte, error) {
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
	dst[start+2] |= byte(FlagSealed)
	dst[start+4] = s.primary
	w := workPool.Get().(*work)
	defer workPool.Put(w)
	be.PutUint64(w.counters[:], sl.Epoch)
	be.PutUint64(w.counters[8:], sl.Counter)
	if _, err := rand.Read(w.nonce[:]); err != nil {
		return dst[:start], err
	}
	dst = s.keys[s.primary].Seal(dst, w.nonce[:], b[HeaderSize:], w.aad(s.prefix, dst[start:], w.counters[:]))
	dst = append(dst, w.counters[:]...)
	return append(dst, w.nonce[:]...), nil
}

// SealedKey returns the key id and the seal trailer of the sealed datagram
// b without authenticating it, so a receiver can refuse unknown keys and
// known replays before it spends a decryption on them. Nothing it returns
// may be trusted before Open succeeds. Errors are ErrShort, ErrTooLarge,
// ErrVersion and ErrUnsealed.
func SealedKey(b []byte) (uint8, Seal, error) {
	switch {
	case len(b) < HeaderSize:
		return 0, Seal{}, ErrShort
	case len(b) > MaxDatagramSize:
		return 0, Seal{}, ErrTooLarge
	case b[0] != Version:
		return 0, Seal{}, ErrVersion
	case Flags(b[2])&FlagSealed == 0:
		return 0, Seal{}, ErrUnsealed
	case len(b) < HeaderSize+SealOverhead:
		return 0, Seal{}, ErrShort
	}
	c := b[len(b)-nonceSize-sealCountersSize:]
	return b[4], Seal{Epoch: be.Uint64(c), Counter: be.Uint64(c[8:])}, nil
}

// Open authenticates and decrypts the sealed datagram b in place and
// returns the plaintext datagram (FlagSealed cleared, KeyID 0), ready for
// Decode: a prefix of b. On an authentication error the body of b may
// have been overwritten (it is garbage either way). Nothing is allocated. Errors are those of SealedKey, ErrUnknownKey and ErrAuth.
func (s *Sealer) Open(b []byte) ([]byte, Seal, error) {
	id, sl, err := SealedKey(b)
	if err != nil {
		return nil, Seal{}, err
	}
	aead := s.keys[id]
	if aead == nil {
		return nil, Seal{}, ErrUnknownKey
	}
	w := workPool.Get().(*work)
	defer workPool.Put(w)
	trailer := len(b) - nonceSize - sealCountersSize
	copy(w.nonce[:], b[trailer+sealCountersSize:])
	copy(w.counters[:], b[trailer:])
	aad := w.aad(s.prefix, b, w.counters[:])
	ct := b[HeaderSize:trailer]
	if _, err := aead.Open(ct[:0], w.nonce[:], ct, aad); err != nil {
		return nil, Seal{}, ErrAuth
	}
	b[2] &^= byte(FlagSealed)
	b[4] = 0
	return b[:trailer-tagSize], sl, nil
}

// work holds the associated data, counters and nonce of one operation.
// Pooled: slices passed to the AEAD interface escape and would allocate.
type work struct {
	buf      [1 + MaxLabelSize + HeaderSize + sealCountersSize]byte
	counters [sealCountersSize]byte
	nonce    [nonceSize]byte
}

var workPool = sync.Pool{New: func() any { return new(work) }}

// aad returns the associated data: label prefix, header, epoch and counter.
func (w *work) aad(prefix, hdr, counters []byte) []byte {
	return append(append(append(w.buf[:0], prefix...), hdr[:HeaderSize]...), counters...)
}
