package frame

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// Marshal returns the encoding of f after checking it against the limits.
func Marshal(f *Frame) ([]byte, error) {
	return Append(nil, f)
}

// Append appends the encoding of f to dst after checking it against the
// limits; on error dst is returned unchanged.
func Append(dst []byte, f *Frame) ([]byte, error) {
	if err := f.check(); err != nil {
		return dst, err
	}
	b := dst
	b = append(b, Magic, Version, byte(f.Type), byte(f.Flags))
	b = binary.BigEndian.AppendUint32(b, f.Seq)
	b = binary.BigEndian.AppendUint16(b, uint16(len(f.Attrs)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(f.Data)))
	for _, a := range f.Attrs {
		b = binary.BigEndian.AppendUint16(b, uint16(len(a.Name)))
		b = append(b, a.Name...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(a.Value)))
		b = append(b, a.Value...)
	}
	return append(b, f.Data...), nil
}

// check checks f against the limits, the rules an encoder and a decoder
// share.
func (f *Frame) check() error {
	if f.Type < StreamReq || f.Type > Event {
		return fmt.Errorf("%w: %d", ErrMsgType, f.Type)
	}
	if len(f.Attrs) > MaxAttrs {
		return fmt.Errorf("%w: %d, at most %d", ErrTooManyAttrs, len(f.Attrs), MaxAttrs)
	}
	if len(f.Data) > MaxDataBytes {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrDataTooLarge, len(f.Data), MaxDataBytes)
	}
	for i, a := range f.Attrs {
		if err := checkAttr(i, a.Name, a.Value); err != nil {
			return err
		}
	}
	if n := f.Size(); n > MaxFrameBytes {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrFrameTooLarge, n, MaxFrameBytes)
	}
	return nil
}

// checkAttr checks attribute i's name and value.
func checkAttr(i int, name, value string) error {
	if len(name) > MaxNameBytes {
		return fmt.Errorf("%w: attribute %d has %d bytes, at most %d", ErrNameTooLong, i, len(name), MaxNameBytes)
	}
	if len(value) > MaxValueBytes {
		return fmt.Errorf("%w: attribute %d has %d bytes, at most %d", ErrValueTooLong, i, len(value), MaxValueBytes)
	}
	if !utf8.ValidString(name) || !utf8.ValidString(value) {
		return fmt.Errorf("%w: attribute %d", ErrNotUTF8, i)
	}
	return nil
}

// Unmarshal decodes the frame b holds, all of b. The frame's Data shares
// b's memory; its attributes do not.
func Unmarshal(b []byte) (*Frame, error) {
	if len(b) > MaxFrameBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrFrameTooLarge, len(b), MaxFrameBytes)
	}
	if len(b) < HeaderLen {
		return nil, fmt.Errorf("%w: %d bytes, header needs %d", ErrShort, len(b), HeaderLen)
	}
	if b[0] != Magic {
		return nil, fmt.Errorf("%w: 0x%02x", ErrMagic, b[0])
	}
	if b[1] != Version {
		return nil, fmt.Errorf("%w: %d", ErrVersion, b[1])
	}
	f := &Frame{Type: MsgType(b[2]), Flags: Flags(b[3]), Seq: binary.BigEndian.Uint32(b[4:])}
	if f.Type < StreamReq || f.Type > Event {
		return nil, fmt.Errorf("%w: %d", ErrMsgType, f.Type)
	}
	keys := int(binary.BigEndian.Uint16(b[8:]))
	dataLen := binary.BigEndian.Uint32(b[10:])
	if keys > MaxAttrs {
		return nil, fmt.Errorf("%w: %d, at most %d", ErrTooManyAttrs, keys, MaxAttrs)
	}
	if dataLen > MaxDataBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrDataTooLarge, dataLen, MaxDataBytes)
	}
	rest, err := f.decodeAttrs(b[HeaderLen:], keys)
	if err != nil {
		return nil, err
	}
	switch {
	case uint32(len(rest)) < dataLen:
		return nil, fmt.Errorf("%w: %d bytes of data, %d announced", ErrShort, len(rest), dataLen)
	case uint32(len(rest)) > dataLen:
		return nil, fmt.Errorf("%w: %d bytes after the data", ErrTrailing, uint32(len(rest))-dataLen)
	}
	if dataLen > 0 {
		f.Data = rest[:dataLen:dataLen]
	}
	return f, nil
}

// decodeAttrs decodes n attributes from the start of b and returns what
// follows them.
func (f *Frame) decodeAttrs(b []byte, n int) ([]byte, error) {
	if n > 0 {
		f.Attrs = make([]Attr, 0, min(n, len(b)/attrOverhead))
	}
	for i := range n {
		if len(b) < 2 {
			return nil, fmt.Errorf("%w: attribute %d: name length", ErrShort, i)
		}
		nameLen := int(binary.BigEndian.Uint16(b))
		if nameLen > MaxNameBytes {
			return nil, fmt.Errorf("%w: attribute %d has %d bytes, at most %d", ErrNameTooLong, i, nameLen, MaxNameBytes)
		}
		if len(b) < 2+nameLen+4 {
			return nil, fmt.Errorf("%w: attribute %d: name", ErrShort, i)
		}
		name := b[2 : 2+nameLen]
		b = b[2+nameLen:]
		valLen := binary.BigEndian.Uint32(b)
		if valLen > MaxValueBytes {
			return nil, fmt.Errorf("%w: attribute %d has %d bytes, at most %d", ErrValueTooLong, i, valLen, MaxValueBytes)
		}
		if uint32(len(b)-4) < valLen {
			return nil, fmt.Errorf("%w: attribute %d: value", ErrShort, i)
		}
		value := b[4 : 4+valLen]
		b = b[4+valLen:]
		if !utf8.Valid(name) || !utf8.Valid(value) {
			return nil, fmt.Errorf("%w: attribute %d", ErrNotUTF8, i)
		}
		f.Attrs = append(f.Attrs, Attr{string(name), string(value)})
	}
	return b, nil
}
