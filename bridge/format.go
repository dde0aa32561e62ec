package bridge

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/mesh/frame"
)

// Format says how an event is written into a broker message.
type Format int

// Formats, append only.
const (
	// FormatDefault lets the broker choose its binding's default.
	FormatDefault Format = iota
	// FormatBinary: attributes in the broker's headers or properties, the
	// data as the value.
	FormatBinary
	// FormatStructured: the whole event as CloudEvents JSON.
	FormatStructured
	// FormatRaw: the data alone; read as an attribute-less message.
	FormatRaw
	// FormatFrame: the EventMeshFrame encoding of the event; read back with
	// the CloudEvents JSON fallback.
	FormatFrame
)

var formatNames = [...]string{"default", "binary", "structured", "raw", "frame"}

// String returns the format's configuration name.
func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat parses a configuration name ("" is FormatDefault).
func ParseFormat(s string) (Format, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return FormatDefault, nil
	}
	for i, n := range formatNames {
		if n == s {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("%w: format %q (binary, structured, raw or frame)", ErrSettings, s)
}

// ContentType returns the content type of a message value in format f for
// e: MediaType for structured, e's datacontenttype for raw,
// FrameContentType for frame; binary has none here (the binding says it).
func ContentType(f Format, e *cloudevent.Event) string {
	switch f {
	case FormatStructured:
		return cloudevent.MediaType
	case FormatFrame:
		return FrameContentType
	case FormatRaw:
		return e.DataContentType
	}
	return ""
}

// FrameContentType is the content type of a message whose value is an
// EventMeshFrame.
const FrameContentType = "application/x-eventmesh-frame"

// EncodeValue returns the message value of e in a broker-neutral format:
// structured, raw or frame. Binary is the broker's own.
func EncodeValue(f Format, e *cloudevent.Event) ([]byte, error) {
	switch f {
	case FormatStructured:
		return cloudevent.Marshal(e)
	case FormatRaw:
		return e.Data, nil
	case FormatFrame:
		fr, err := frame.FromCloudEvent(e)
		if err != nil {
			return nil, err
		}
		return frame.Marshal(fr)
	}
	return nil, fmt.Errorf("%w: EncodeValue of format %s", ErrSettings, f)
}

// DecodeValue reads a message value in a broker-neutral format. fallback
// gives the event of an attribute-less message (FormatRaw), which it is
// given the value of. A frame value that is not a frame is read as
// CloudEvents JSON. Errors wrap package cloudevent's or mesh/frame's
// sentinels; ReasonOf names them.
func DecodeValue(f Format, value []byte, fallback func([]byte) *cloudevent.Event) (*cloudevent.Event, error) {
	switch f {
	case FormatStructured:
		return cloudevent.Unmarshal(value)
	case FormatRaw:
		e := fallback(value)
		return e, e.Validate()
	case FormatFrame:
		if len(value) == 0 || value[0] != frame.Magic {
			return cloudevent.Unmarshal(value)
		}
		fr, err := frame.Unmarshal(value)
		if err != nil {
			return nil, err
		}
		return fr.CloudEvent()
	}
	return nil, fmt.Errorf("%w: DecodeValue of format %s", ErrSettings, f)
}

// Reason says why a message became a dead letter or was dropped: the
// reason label of the metrics and the value of ExtDeadLetterReason.
type Reason string

// Reasons, the label values of rsbd_bridge_drops_total and
// rsbd_bridge_dead_letters_total.
const (
	// ReasonJSON: a structured message is not CloudEvents JSON.
	ReasonJSON Reason = "bad_json"
	// ReasonFrame: a frame message is not a valid EventMeshFrame.
	ReasonFrame Reason = "bad_frame"
	// ReasonAttribute: an attribute's name or value breaks the CloudEvents
	// rules (an invalid extension name, a bad time, a missing id).
	ReasonAttribute Reason = "bad_attribute"
	// ReasonTooLarge: the event passes a limit of the mapping or the broker.
	ReasonTooLarge Reason = "too_large"
	// ReasonUnmappable: an RSB event has no CloudEvents form (strings that
	// are not UTF-8), or a CloudEvent no RSB form.
	ReasonUnmappable Reason = "unmappable"
	// ReasonRejected: the broker refused the event for good.
	ReasonRejected Reason = "rejected"
	// ReasonQueueFull: the outbound queue was full (drops only).
	ReasonQueueFull Reason = "queue_full"
	// ReasonCycle: the event came in through the same bridge (drops only).
	ReasonCycle Reason = "cycle"
	// ReasonDeadLetterFailed: a dead letter could not be delivered either
	// (drops only).
	ReasonDeadLetterFailed Reason = "dead_letter_failed"
)

// ReasonOf names the reason of a conversion error.
func ReasonOf(err error) Reason {
	switch {
	case errors.Is(err, ErrRejected):
		return ReasonRejected
	case errors.Is(err, cloudevent.ErrJSON):
		return ReasonJSON
	case errors.Is(err, cloudevent.ErrTooLarge), errors.Is(err, cloudevent.ErrDataTooLarge),
		errors.Is(err, cloudevent.ErrTooManyAttributes), errors.Is(err, cloudevent.ErrValueTooLong),
		errors.Is(err, frame.ErrFrameTooLarge), errors.Is(err, frame.ErrDataTooLarge),
		errors.Is(err, frame.ErrTooManyAttrs), errors.Is(err, frame.ErrValueTooLong):
		return ReasonTooLarge
	case isFrameErr(err):
		return ReasonFrame
	case errors.Is(err, cloudevent.ErrNoScope), errors.Is(err, cloudevent.ErrRSB):
		return ReasonUnmappable
	}
	return ReasonAttribute
}

// isFrameErr reports whether err says a frame is malformed.
func isFrameErr(err error) bool {
	for _, e := range [...]error{frame.ErrShort, frame.ErrMagic, frame.ErrVersion, frame.ErrMsgType,
		frame.ErrTrailing, frame.ErrNameTooLong, frame.ErrNotUTF8, frame.ErrNotEvent} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
