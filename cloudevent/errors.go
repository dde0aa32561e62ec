package cloudevent

import "errors"

// Errors callers branch on. Errors returned by the package wrap one of them
// with %w and say which attribute or byte is at fault.
var (
	// ErrNameEmpty: an attribute name is empty.
	ErrNameEmpty = errors.New("cloudevent: empty attribute name")
	// ErrNameTooLong: an attribute name is longer than MaxNameLen.
	ErrNameTooLong = errors.New("cloudevent: attribute name too long")
	// ErrNameChars: an attribute name has a character other than a–z, 0–9.
	ErrNameChars = errors.New("cloudevent: attribute name not lowercase a-z, 0-9")
	// ErrNameReserved: an extension takes the name of a context attribute or
	// "data".
	ErrNameReserved = errors.New("cloudevent: reserved attribute name")
	// ErrMissing: a required attribute (id, source, type) is empty or absent.
	ErrMissing = errors.New("cloudevent: required attribute missing")
	// ErrEmptyValue: an optional context attribute is present but empty.
	ErrEmptyValue = errors.New("cloudevent: empty attribute value")
	// ErrBadValue: an attribute value is not a valid CloudEvents value of its
	// type (string characters, URI, RFC 3339 time, integer).
	ErrBadValue = errors.New("cloudevent: bad attribute value")
	// ErrValueTooLong: an attribute value is longer than MaxValueBytes.
	ErrValueTooLong = errors.New("cloudevent: attribute value too long")
	// ErrTooManyAttributes: an event has more than MaxAttributes attributes.
	ErrTooManyAttributes = errors.New("cloudevent: too many attributes")
	// ErrDataTooLarge: an event's data is larger than MaxDataBytes.
	ErrDataTooLarge = errors.New("cloudevent: data too large")
	// ErrSpecVersion: specversion is absent or not "1.0".
	ErrSpecVersion = errors.New("cloudevent: unsupported specversion")
	// ErrJSON: input is not the CloudEvents JSON format (syntax, member
	// types, duplicate members, data and data_base64 together).
	ErrJSON = errors.New("cloudevent: malformed JSON event")
	// ErrTooLarge: JSON input is longer than MaxEventJSONBytes or
	// MaxBatchBytes.
	ErrTooLarge = errors.New("cloudevent: JSON input too large")
	// ErrBatchTooLong: a batch has more than MaxBatchEvents events.
	ErrBatchTooLong = errors.New("cloudevent: too many events in batch")
	// ErrNoScope: ToRSB got an event without a subject, or one that is not
	// an RSB scope.
	ErrNoScope = errors.New("cloudevent: subject is not an RSB scope")
	// ErrRSB: an rsb… extension does not hold what its name says, or an RSB
	// event has a field no CloudEvent can carry (a string that is not valid
	// UTF-8).
	ErrRSB = errors.New("cloudevent: bad RSB attribute")
)
