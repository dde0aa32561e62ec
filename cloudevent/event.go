package cloudevent

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Event is a CloudEvent: its context attributes in their canonical string
// form and its data. An empty string is an absent attribute; specversion is
// always SpecVersion and not stored.
type Event struct {
	// ID identifies the event; with Source it is unique. Required.
	ID string
	// Source is a URI-reference naming the context the event happened in.
	// Required.
	Source string
	// Type names the kind of event. Required.
	Type string
	// Subject is the subject of the event within its source; for RSB
	// events the scope.
	Subject string
	// Time is when the event happened, in RFC 3339.
	Time string
	// DataContentType is the media type of Data.
	DataContentType string
	// DataSchema is a URI of the schema Data adheres to.
	DataSchema string
	// Extensions maps extension names to their values in canonical string
	// form (booleans "true"/"false", integers in decimal).
	Extensions map[string]string
	// Data is the event's payload.
	Data []byte
}

// Attr is a context attribute: its name and value in canonical string form.
type Attr struct {
	Name  string
	Value string
}

// Names of the context attributes CloudEvents defines.
const (
	AttrSpecVersion     = "specversion"
	AttrID              = "id"
	AttrSource          = "source"
	AttrType            = "type"
	AttrSubject         = "subject"
	AttrTime            = "time"
	AttrDataContentType = "datacontenttype"
	AttrDataSchema      = "dataschema"
)

// isContextName reports whether name is a context attribute CloudEvents
// defines, or "data": no extension may take those names.
func isContextName(name string) bool {
	switch name {
	case AttrSpecVersion, AttrID, AttrSource, AttrType, AttrSubject, AttrTime,
		AttrDataContentType, AttrDataSchema, "data":
		return true
	}
	return false
}

// ValidName checks an attribute name: 1 to MaxNameLen characters, each a
// lowercase ASCII letter or a digit.
func ValidName(name string) error {
	if name == "" {
		return ErrNameEmpty
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("%w: %q has %d characters, at most %d", ErrNameTooLong, truncate(name), len(name), MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return fmt.Errorf("%w: %q has %q at byte %d", ErrNameChars, name, c, i)
		}
	}
	return nil
}

// ValidString reports whether s is a CloudEvents String: valid UTF-8
// without control characters (U+0000–U+001F, U+007F–U+009F) and without
// noncharacters. Surrogates cannot occur in valid UTF-8.
func ValidString(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r <= 0x9f || isNonCharacter(r) {
			return false
		}
		i += n
	}
	return true
}

// isNonCharacter reports whether r is one of Unicode's 66 noncharacters.
func isNonCharacter(r rune) bool {
	return r >= 0xfdd0 && r <= 0xfdef || r&0xfffe == 0xfffe
}

// SetExtension sets the extension name to value after checking the name;
// the value is checked by Validate.
func (e *Event) SetExtension(name, value string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if isContextName(name) {
		return fmt.Errorf("%w: %q", ErrNameReserved, name)
	}
	if e.Extensions == nil {
		e.Extensions = make(map[string]string)
	}
	e.Extensions[name] = value
	return nil
}

// Attrs returns the event's attributes: specversion, the context
// attributes that are present in the order of the specification, then the
// extensions sorted by name.
func (e *Event) Attrs() []Attr {
	attrs := make([]Attr, 0, 8+len(e.Extensions))
	attrs = append(attrs, Attr{AttrSpecVersion, SpecVersion})
	for _, a := range [...]Attr{
		{AttrID, e.ID}, {AttrSource, e.Source}, {AttrType, e.Type}, {AttrSubject, e.Subject},
		{AttrTime, e.Time}, {AttrDataContentType, e.DataContentType}, {AttrDataSchema, e.DataSchema},
	} {
		if a.Value != "" {
			attrs = append(attrs, a)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(e.Extensions)) {
		attrs = append(attrs, Attr{name, e.Extensions[name]})
	}
	return attrs
}

// SetAttr sets the attribute name to value: a context attribute, or else an
// extension. specversion must be SpecVersion. Values are checked by
// Validate.
func (e *Event) SetAttr(name, value string) error {
	switch name {
	case AttrSpecVersion:
		if value != SpecVersion {
			return fmt.Errorf("%w: %q", ErrSpecVersion, truncate(value))
		}
	case AttrID:
		e.ID = value
	case AttrSource:
		e.Source = value
	case AttrType:
		e.Type = value
	case AttrSubject:
		e.Subject = value
	case AttrTime:
		e.Time = value
	case AttrDataContentType:
		e.DataContentType = value
	case AttrDataSchema:
		e.DataSchema = value
	default:
		return e.SetExtension(name, value)
	}
	return nil
}

// Validate checks e against the CloudEvents 1.0 rules and the package's
// limits. The error wraps one of the package's sentinel errors.
func (e *Event) Validate() error {
	for _, a := range [...]Attr{{AttrID, e.ID}, {AttrSource, e.Source}, {AttrType, e.Type}} {
		if a.Value == "" {
			return fmt.Errorf("%w: %s", ErrMissing, a.Name)
		}
	}
	if n := 4 + len(e.Extensions) + nonEmpty(e.Subject, e.Time, e.DataContentType, e.DataSchema); n > MaxAttributes {
		return fmt.Errorf("%w: %d, at most %d", ErrTooManyAttributes, n, MaxAttributes)
	}
	if len(e.Data) > MaxDataBytes {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrDataTooLarge, len(e.Data), MaxDataBytes)
	}
	for _, a := range e.Attrs() {
		if err := validAttr(a); err != nil {
			return err
		}
	}
	return nil
}

// validAttr checks one attribute's name (for extensions) and value.
func validAttr(a Attr) error {
	if !isContextName(a.Name) {
		if err := ValidName(a.Name); err != nil {
			return err
		}
	}
	if len(a.Value) > MaxValueBytes {
		return fmt.Errorf("%w: %s has %d bytes, at most %d", ErrValueTooLong, a.Name, len(a.Value), MaxValueBytes)
	}
	if !ValidString(a.Value) {
		return fmt.Errorf("%w: %s is not a CloudEvents string", ErrBadValue, a.Name)
	}
	switch a.Name {
	case AttrSource:
		if _, err := url.Parse(a.Value); err != nil || !uriChars(a.Value) {
			return fmt.Errorf("%w: source is not a URI-reference", ErrBadValue)
		}
	case AttrDataSchema:
		if u, err := url.Parse(a.Value); err != nil || !u.IsAbs() || !uriChars(a.Value) {
			return fmt.Errorf("%w: dataschema is not an absolute URI", ErrBadValue)
		}
	case AttrTime:
		if _, err := ParseTime(a.Value); err != nil {
			return err
		}
	case AttrDataContentType:
		if !isMediaType(a.Value) {
			return fmt.Errorf("%w: datacontenttype is not a media type", ErrBadValue)
		}
	}
	return nil
}

// uriChars reports whether s has only the characters RFC 3986 allows in a
// URI: unreserved, reserved and '%'.
func uriChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("-._~:/?#[]@!$&'()*+,;=%", c) >= 0) {
			return false
		}
	}
	return true
}

// ParseTime parses an RFC 3339 timestamp, the form of the time attribute.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: time %q is not RFC 3339", ErrBadValue, truncate(s))
	}
	return t, nil
}

// FormatTime formats t in RFC 3339 in UTC with microseconds, the precision
// of RSB timestamps.
func FormatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z07:00")
}

// nonEmpty counts the non-empty strings among ss.
func nonEmpty(ss ...string) int {
	n := 0
	for _, s := range ss {
		if s != "" {
			n++
		}
	}
	return n
}

// truncate shortens s for an error message, so hostile input does not
// blow up logs.
func truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
