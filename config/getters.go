package config

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// String returns the value of key, or def when the key is not set. A key set to the empty
// string returns "".
func (c *Config) String(key, def string) string {
	if v, ok := c.Get(key); ok {
		return v.String
	}
	return def
}

// Int returns the value of key as a base-10 integer, or def when the key is not set.
// A value that does not parse yields def and a *ValueError wrapping ErrBadValue.
func (c *Config) Int(key string, def int) (int, error) {
	v, ok := c.Get(key)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v.String))
	if err != nil {
		return def, valueError(key, v, "an integer", numErr(err))
	}
	return n, nil
}

// Bool returns the value of key as an RSB boolean (see ParseBool), or def when the key is
// not set. Anything else yields def and a *ValueError wrapping ErrBadValue.
func (c *Config) Bool(key string, def bool) (bool, error) {
	v, ok := c.Get(key)
	if !ok {
		return def, nil
	}
	b, err := ParseBool(v.String)
	if err != nil {
		return def, valueError(key, v, "a boolean (1/0, true/false, yes/no, on/off)", nil)
	}
	return b, nil
}

// Duration returns the value of key as a Go duration ("250ms", "1.5s", "2m"; "0" is
// allowed), or def when the key is not set. Negative durations and values that do not
// parse yield def and a *ValueError wrapping ErrBadValue.
func (c *Config) Duration(key string, def time.Duration) (time.Duration, error) {
	v, ok := c.Get(key)
	if !ok {
		return def, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(v.String))
	if err != nil || d < 0 {
		return def, valueError(key, v, "a non-negative duration such as 250ms or 2s", nil)
	}
	return d, nil
}

// StringList returns the value of key split at commas, each item trimmed and empty items
// dropped, or def when the key is not set. A key set to "" yields an empty list.
func (c *Config) StringList(key string, def []string) []string {
	v, ok := c.Get(key)
	if !ok {
		return def
	}
	return splitList(v.String)
}

// splitList splits s at commas, trimming items and dropping empty ones.
func splitList(s string) []string {
	out := []string{}
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// errNotBool is the cause ParseBool reports.
var errNotBool = errors.New("not an RSB boolean")

// ParseBool parses an RSB boolean: 1, true, yes, on are true; 0, false, no, off are
// false; case and surrounding whitespace are ignored.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, errNotBool
}

// valueError builds the *ValueError for key's value v.
func valueError(key string, v Value, want string, cause error) error {
	k, err := NormalizeKey(key)
	if err != nil {
		k = key
	}
	return &ValueError{Key: k, Value: v.String, Origin: v.Origin, Want: want, Err: cause}
}

// numErr strips the repeated input from a strconv error, keeping its cause.
func numErr(err error) error {
	if ne, ok := errors.AsType[*strconv.NumError](err); ok {
		return ne.Err
	}
	return err
}
