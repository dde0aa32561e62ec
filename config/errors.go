package config

import (
	"errors"
	"fmt"
)

// Sentinel errors callers can branch on with errors.Is.
var (
	// ErrSyntax marks a malformed configuration file line or key.
	ErrSyntax = errors.New("config: syntax error")

	// ErrBadValue marks a value that does not parse as the requested type or enum.
	ErrBadValue = errors.New("config: bad value")

	// ErrFileTooLarge marks a configuration file larger than MaxFileSize.
	ErrFileTooLarge = errors.New("config: file too large")

	// ErrTooManyFiles marks a file list longer than MaxFiles.
	ErrTooManyFiles = errors.New("config: too many configuration files")
)

// SyntaxError reports a malformed line of a configuration file. It matches ErrSyntax.
type SyntaxError struct {
	File string // file name as given to the parser
	Line int    // 1-based line number
	Msg  string // what is wrong
}

// Error implements error as "config: FILE:LINE: MSG".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("config: %s:%d: %s", e.File, e.Line, e.Msg)
}

// Unwrap lets errors.Is(err, ErrSyntax) match.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// ValueError reports a value that does not have the type a getter asked for. It matches
// ErrBadValue.
type ValueError struct {
	Key    string // canonical key
	Value  string // the raw value
	Origin Origin // where the value came from
	Want   string // what was expected, e.g. "an integer"
	Err    error  // underlying parse error, if any
}

// Error implements error, naming the key, the value, its origin and the expectation.
func (e *ValueError) Error() string {
	msg := fmt.Sprintf("config: %s = %q (from %s): want %s", e.Key, e.Value, e.Origin, e.Want)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap lets errors.Is match ErrBadValue and the underlying parse error.
func (e *ValueError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrBadValue, e.Err}
	}
	return []error{ErrBadValue}
}
