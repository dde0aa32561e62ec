package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rsbd/rsbd/scope"
)

// errSpec is wrapped by every event-spec and call-spec parse error.
var errSpec = errors.New("bad event spec")

// specSources are where "-" and #P"file" specs read their payload.
type specSources struct {
	stdin    io.Reader
	readFile func(name string) ([]byte, error)
	// proto parses a pb:.package.Message:{text} spec; nil: not supported.
	proto func(spec string) (any, error)
	// idl is the set proto uses, for decoding replies.
	idl *idlSet
}

// parseEventSpec turns an RSB event spec into a payload value:
//
//	''             void (nil)
//	true, false    bool
//	"text"         string (utf-8-string); \" and \\ escape
//	123, -5        int64
//	1.5, -2e3      float64 (double)
//	/a/b           scope.Scope
//	-              stdin as a utf-8 string
//	-:binary       stdin as bytes
//	#P"file"       the file as a utf-8 string (also #P"file":utf-8)
//	#P"file":binary the file as bytes
func parseEventSpec(spec string, src specSources) (any, error) {
	switch {
	case spec == "":
		return nil, nil
	case spec == "true" || spec == "false":
		return spec == "true", nil
	case strings.HasPrefix(spec, `"`):
		s, rest, err := parseQuoted(spec)
		if err != nil {
			return nil, err
		}
		if rest != "" {
			return nil, fmt.Errorf("%w: %q after the closing quote", errSpec, rest)
		}
		return s, nil
	case strings.HasPrefix(spec, "/"):
		sc, err := scope.Parse(spec)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errSpec, err)
		}
		return sc, nil
	case spec == "-" || spec == "-:binary":
		return readPayload(src.stdin, "stdin", spec == "-:binary")
	case strings.HasPrefix(spec, "#P"):
		return parseFileSpec(spec[2:], src)
	case strings.HasPrefix(spec, "pb:"):
		if src.proto == nil {
			return nil, fmt.Errorf("%w: protocol buffer specs (pb:) are not supported here", errSpec)
		}
		return src.proto(spec)
	}
	return parseNumber(spec)
}

// parseNumber accepts decimal integers (int64) and floats (float64).
func parseNumber(spec string) (any, error) {
	if n, err := strconv.ParseInt(spec, 10, 64); err == nil {
		return n, nil
	}
	if isFloatSyntax(spec) {
		if f, err := strconv.ParseFloat(spec, 64); err == nil {
			return f, nil
		}
	}
	return nil, fmt.Errorf("%w: %q is none of '', true, false, \"string\", integer, float, /scope, -, -:binary, #P\"file\"", errSpec, spec)
}

// isFloatSyntax accepts digits with sign, point and exponent only (not
// "inf", "nan" or hex floats, which ParseFloat would take).
func isFloatSyntax(s string) bool {
	digits := false
	for _, c := range []byte(s) {
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-':
		default:
			return false
		}
	}
	return digits
}

// parseQuoted reads a double-quoted string at the start of s, where a
// backslash takes the next character literally, and returns the rest.
func parseQuoted(s string) (string, string, error) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", fmt.Errorf("%w: want a double-quoted string", errSpec)
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 == len(s) {
				return "", "", fmt.Errorf("%w: backslash at the end", errSpec)
			}
			i++
			b.WriteByte(s[i])
		case '"':
			out := b.String()
			if !utf8.ValidString(out) {
				return "", "", fmt.Errorf("%w: string is not valid UTF-8", errSpec)
			}
			return out, s[i+1:], nil
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("%w: unterminated string", errSpec)
}

// parseFileSpec handles "file"[:binary|:utf-8] after #P.
func parseFileSpec(s string, src specSources) (any, error) {
	name, rest, err := parseQuoted(s)
	if err != nil {
		return nil, err
	}
	binary := false
	switch strings.ToLower(rest) {
	case "", ":utf-8", ":utf8":
	case ":binary":
		binary = true
	default:
		return nil, fmt.Errorf("%w: file encoding %q (want :binary or :utf-8)", errSpec, rest)
	}
	if name == "" {
		return nil, fmt.Errorf("%w: empty file name", errSpec)
	}
	data, err := src.readFile(name)
	if err != nil {
		return nil, err
	}
	if len(data) > maxPayload {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxPayload)
	}
	return payloadFrom(data, name, binary)
}

// readPayload reads at most maxPayload bytes from r.
func readPayload(r io.Reader, what string, binary bool) (any, error) {
	if r == nil {
		return nil, fmt.Errorf("%s: not available", what)
	}
	data, err := io.ReadAll(io.LimitReader(r, maxPayload+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if len(data) > maxPayload {
		return nil, fmt.Errorf("%s: larger than %d bytes", what, maxPayload)
	}
	return payloadFrom(data, what, binary)
}

// payloadFrom returns data as bytes or as a checked UTF-8 string.
func payloadFrom(data []byte, what string, binary bool) (any, error) {
	if binary {
		return data, nil
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s is not valid UTF-8 (use :binary)", what)
	}
	return string(data), nil
}
