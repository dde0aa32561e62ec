package frame

import "errors"

// Errors callers branch on. Errors returned by the package wrap one of them
// with %w.
var (
	// ErrShort: the input ends before the frame its lengths announce.
	ErrShort = errors.New("frame: truncated")
	// ErrMagic: the first byte is not Magic.
	ErrMagic = errors.New("frame: bad magic")
	// ErrVersion: the version byte is not Version.
	ErrVersion = errors.New("frame: unsupported version")
	// ErrMsgType: the message type is none of STREAM_REQ, STREAM_CHUNK and
	// EVENT.
	ErrMsgType = errors.New("frame: unknown message type")
	// ErrTrailing: bytes follow the frame.
	ErrTrailing = errors.New("frame: trailing bytes")
	// ErrFrameTooLarge: the frame is longer than MaxFrameBytes.
	ErrFrameTooLarge = errors.New("frame: frame too large")
	// ErrDataTooLarge: the data is longer than MaxDataBytes.
	ErrDataTooLarge = errors.New("frame: data too large")
	// ErrTooManyAttrs: more than MaxAttrs attributes.
	ErrTooManyAttrs = errors.New("frame: too many attributes")
	// ErrNameTooLong: an attribute name is longer than MaxNameBytes.
	ErrNameTooLong = errors.New("frame: attribute name too long")
	// ErrValueTooLong: an attribute value is longer than MaxValueBytes.
	ErrValueTooLong = errors.New("frame: attribute value too long")
	// ErrNotUTF8: an attribute name or value is not valid UTF-8.
	ErrNotUTF8 = errors.New("frame: attribute not valid UTF-8")
	// ErrNotEvent: an event was asked of a frame that is not an EVENT.
	ErrNotEvent = errors.New("frame: not an EVENT frame")
	// ErrBadTTL: emttl is not a non-negative number of milliseconds.
	ErrBadTTL = errors.New("frame: bad emttl")
)
