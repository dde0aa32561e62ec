package datagram

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// ErrKeyFile is wrapped by every error of ParseKeys.
var ErrKeyFile = errors.New("datagram: invalid key file")

// ParseKeys reads a keyring from the text of a key file: one key a line,
// "ID KEY", where ID is the key's id (1..255) and KEY its 32 bytes in hex
// (64 digits) or base64 (standard alphabet, padded). Blank lines and lines
// starting with # are skipped. The first key is the primary (it seals);
// all of them open. Ids must be distinct. Errors wrap ErrKeyFile and name
// the line, never the key.
func ParseKeys(text []byte) ([]Key, error) {
	if len(text) > MaxKeyFileSize {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrKeyFile, len(text), MaxKeyFileSize)
	}
	var keys []Key
	var seen [256]bool
	for n, line := range bytes.Split(text, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		k, err := parseKeyLine(line)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrKeyFile, n+1, err)
		}
		if seen[k.ID] {
			return nil, fmt.Errorf("%w: line %d: key id %d repeated", ErrKeyFile, n+1, k.ID)
		}
		seen[k.ID] = true
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no key", ErrKeyFile)
	}
	return keys, nil
}

// parseKeyLine reads "ID KEY".
func parseKeyLine(line []byte) (Key, error) {
	f := bytes.Fields(line)
	if len(f) != 2 {
		return Key{}, errors.New(`want "ID KEY"`)
	}
	id, err := strconv.ParseUint(string(f[0]), 10, 8)
	if err != nil || id == 0 {
		return Key{}, errors.New("key id is not a number 1..255")
	}
	k := Key{ID: uint8(id)}
	switch {
	case len(f[1]) == hex.EncodedLen(KeySize):
		_, err = hex.Decode(k.Secret[:], f[1])
	case len(f[1]) == base64.StdEncoding.EncodedLen(KeySize):
		var buf [KeySize + 1]byte // DecodedLen of the padded form
		var n int
		if n, err = base64.StdEncoding.Decode(buf[:], f[1]); err == nil && n != KeySize {
			err = errors.New("short")
		}
		copy(k.Secret[:], buf[:])
	default:
		err = errors.New("wrong length")
	}
	if err != nil {
		return Key{}, fmt.Errorf("key %d is not 32 bytes in hex or base64", id)
	}
	return k, nil
}
