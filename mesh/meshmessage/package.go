package meshmessage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Wire constants of the Package layout.
const (
	// Magic opens every Package.
	Magic = "EventMesh"
	// Version follows Magic; it is the only version there is.
	Version = "0000"
	// PrefixLen is the length of the fixed prefix: magic, version, length
	// and header length.
	PrefixLen = len(Magic) + len(Version) + 4 + 4
	// lengthBase is what length counts besides header and body: the magic
	// and the version.
	lengthBase = len(Magic) + len(Version)
)

// Errors callers branch on. Errors returned by the package wrap them with
// %w.
var (
	// ErrBadMagic: the bytes do not start with "EventMesh".
	ErrBadMagic = errors.New("meshmessage: bad magic")
	// ErrBadVersion: the version after the magic is not "0000".
	ErrBadVersion = errors.New("meshmessage: bad version")
	// ErrTooLarge: the Package is longer than MaxPackage.
	ErrTooLarge = errors.New("meshmessage: package too large")
	// ErrTruncated: the input ends inside the Package.
	ErrTruncated = errors.New("meshmessage: truncated package")
	// ErrBadLength: the length fields contradict each other.
	ErrBadLength = errors.New("meshmessage: bad length")
	// ErrTrailing: bytes follow the Package.
	ErrTrailing = errors.New("meshmessage: trailing bytes")
	// ErrBadHeader: the header is not a JSON object of the header's form
	// or has no command.
	ErrBadHeader = errors.New("meshmessage: bad header")
)

// Header is a Package's header, the JSON object between the prefix and
// the body.
type Header struct {
	// Command is the command's name, such as HELLO_REQUEST.
	Command Command `json:"cmd"`
	// Code is the result code of a response; 0 is success.
	Code int `json:"code"`
	// Desc describes the result of a response.
	Desc string `json:"desc,omitempty"`
	// Seq matches a response or ACK to its request.
	Seq string `json:"seq,omitempty"`
	// Properties carry header properties such as protocoltype.
	Properties map[string]string `json:"properties,omitempty"`
}

// Package is a legacy EventMesh TCP message: a header and a body whose
// form the command chooses.
type Package struct {
	// Header is the header.
	Header Header
	// Body is the raw body.
	Body []byte
}

// Marshal returns the wire form of p, or ErrTooLarge.
func Marshal(p *Package) ([]byte, error) {
	if p.Header.Command == "" {
		return nil, fmt.Errorf("%w: no command", ErrBadHeader)
	}
	h, err := json.Marshal(&p.Header)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadHeader, err)
	}
	total := PrefixLen + len(h) + len(p.Body)
	if total > MaxPackage {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, total, MaxPackage)
	}
	b := make([]byte, 0, total)
	b = append(b, Magic...)
	b = append(b, Version...)
	b = binary.BigEndian.AppendUint32(b, uint32(lengthBase+len(h)+len(p.Body)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(h)))
	b = append(b, h...)
	return append(b, p.Body...), nil
}

// parsePrefix checks a Package's prefix and returns the lengths of its
// header and body.
func parsePrefix(pre []byte) (headerLen, bodyLen int, err error) {
	if string(pre[:len(Magic)]) != Magic {
		return 0, 0, fmt.Errorf("%w: %q", ErrBadMagic, pre[:len(Magic)])
	}
	if v := pre[len(Magic):lengthBase]; string(v) != Version {
		return 0, 0, fmt.Errorf("%w: %q", ErrBadVersion, v)
	}
	length := int64(int32(binary.BigEndian.Uint32(pre[lengthBase:])))
	hlen := int64(int32(binary.BigEndian.Uint32(pre[lengthBase+4:])))
	if length < int64(lengthBase) || hlen < 0 || hlen > length-int64(lengthBase) {
		return 0, 0, fmt.Errorf("%w: length %d, header length %d", ErrBadLength, length, hlen)
	}
	if length+8 > MaxPackage {
		return 0, 0, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, length+8, MaxPackage)
	}
	return int(hlen), int(length - int64(lengthBase) - hlen), nil
}

// decodeRest decodes the header and body that follow a prefix; rest holds
// exactly them.
func decodeRest(rest []byte, headerLen int) (*Package, error) {
	p := &Package{}
	if err := json.Unmarshal(rest[:headerLen], &p.Header); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadHeader, err)
	}
	if p.Header.Command == "" {
		return nil, fmt.Errorf("%w: no command", ErrBadHeader)
	}
	p.Body = rest[headerLen:]
	return p, nil
}

// Unmarshal decodes exactly one Package from b; the body shares b.
func Unmarshal(b []byte) (*Package, error) {
	if len(b) < PrefixLen {
		if err := checkPartialPrefix(b); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %d bytes, the prefix has %d", ErrTruncated, len(b), PrefixLen)
	}
	hlen, blen, err := parsePrefix(b[:PrefixLen])
	if err != nil {
		return nil, err
	}
	rest := b[PrefixLen:]
	switch n := hlen + blen; {
	case len(rest) < n:
		return nil, fmt.Errorf("%w: %d of %d bytes after the prefix", ErrTruncated, len(rest), n)
	case len(rest) > n:
		return nil, fmt.Errorf("%w: %d", ErrTrailing, len(rest)-n)
	}
	return decodeRest(rest, hlen)
}

// checkPartialPrefix reports a bad magic or version in a prefix cut
// short, so a short input fails for what it has.
func checkPartialPrefix(b []byte) error {
	n := min(len(b), len(Magic))
	if string(b[:n]) != Magic[:n] {
		return fmt.Errorf("%w: %q", ErrBadMagic, b[:n])
	}
	if len(b) > len(Magic) {
		v := b[len(Magic):min(len(b), lengthBase)]
		if string(v) != Version[:len(v)] {
			return fmt.Errorf("%w: %q", ErrBadVersion, v)
		}
	}
	return nil
}

// Read reads one Package from r, reading no further than its end. A
// stream that ends before the first byte gives io.EOF; one that ends
// inside a Package gives an error wrapping ErrTruncated.
func Read(r io.Reader) (*Package, error) {
	var pre [PrefixLen]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, truncated(err)
	}
	hlen, blen, err := parsePrefix(pre[:])
	if err != nil {
		return nil, err
	}
	rest := make([]byte, hlen+blen)
	if _, err := io.ReadFull(r, rest); err != nil {
		return nil, truncated(err)
	}
	return decodeRest(rest, hlen)
}

// truncated wraps an error of a read cut short with ErrTruncated.
func truncated(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %w", ErrTruncated, err)
	}
	return err
}
