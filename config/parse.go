package config

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Entry is one option read from a configuration file.
type Entry struct {
	Key   string // canonical key, section and option joined with '.'
	Value string // value without its inline comment and surrounding whitespace, unquoted
	Line  int    // 1-based line number
}

// maxQuoted bounds how much of an offending line an error message repeats.
const maxQuoted = 40

var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// Parse reads data in the INI dialect of RSB configuration files (see the package
// documentation); name identifies the file in errors. It returns the options in file
// order, later duplicates included. Errors wrap ErrSyntax (as *SyntaxError) or
// ErrFileTooLarge. Parse never panics and allocates at most in proportion to len(data).
func Parse(data []byte, name string) ([]Entry, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: %s has more than %d bytes", ErrFileTooLarge, name, MaxFileSize)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	var (
		out        []Entry
		section    string
		sectionSet bool
	)
	for n := 1; len(data) > 0; n++ {
		var raw []byte
		raw, data, _ = bytes.Cut(data, []byte{'\n'})
		line := strings.TrimSpace(string(raw))
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case line[0] == '[':
			s, msg := parseSection(line)
			if msg != "" {
				return nil, &SyntaxError{File: name, Line: n, Msg: msg}
			}
			section, sectionSet = s, true
		default:
			if !sectionSet {
				return nil, &SyntaxError{File: name, Line: n, Msg: "option " + quote(line) + " before the first [section] header"}
			}
			e, msg := parseOption(line, section)
			if msg != "" {
				return nil, &SyntaxError{File: name, Line: n, Msg: msg}
			}
			e.Line = n
			out = append(out, e)
		}
	}
	return out, nil
}

// parseSection parses a "[name]" line, optionally followed by a comment. It returns the
// canonical section name or an error message.
func parseSection(line string) (string, string) {
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return "", "section header " + quote(line) + " lacks ']'"
	}
	if rest := strings.TrimSpace(line[end+1:]); rest != "" && rest[0] != '#' && rest[0] != ';' {
		return "", "unexpected text after section header: " + quote(rest)
	}
	name, err := NormalizeKey(line[1:end])
	if err != nil {
		return "", "bad section name " + quote(line[1:end]) + ": " + strings.TrimPrefix(err.Error(), ErrSyntax.Error()+": ")
	}
	return name, ""
}

// parseOption parses a "key = value # comment" line inside section.
func parseOption(line, section string) (Entry, string) {
	k, v, ok := strings.Cut(line, "=")
	if !ok {
		return Entry{}, "missing '=' in " + quote(line)
	}
	key, err := NormalizeKey(k)
	if err != nil {
		return Entry{}, "bad key " + quote(k) + ": " + strings.TrimPrefix(err.Error(), ErrSyntax.Error()+": ")
	}
	v, msg := parseValue(strings.TrimSpace(v))
	if msg != "" {
		return Entry{}, "value of " + key + ": " + msg
	}
	if msg := checkValue(v); msg != "" {
		return Entry{}, "value of " + key + ": " + msg
	}
	return Entry{Key: section + "." + key, Value: v}, ""
}

// parseValue returns the value of an option from the text after its '=',
// trimmed, or an error message. A value that starts with '"' is a quoted
// string in Go's syntax (\" \\ \t \xNN \u... escapes), in which '#' is a
// plain character and the spaces inside are kept; only a comment may
// follow it. Any other value ends at the first '#', as in RSB.
func parseValue(v string) (string, string) {
	if !strings.HasPrefix(v, `"`) {
		v, _, _ = strings.Cut(v, "#")
		return strings.TrimSpace(v), ""
	}
	end := closingQuote(v)
	if end < 0 {
		return "", "quoted value " + quote(v) + " lacks its closing '\"'"
	}
	if rest := strings.TrimSpace(v[end+1:]); rest != "" && rest[0] != '#' {
		return "", "unexpected text after quoted value: " + quote(rest)
	}
	u, err := strconv.Unquote(v[:end+1])
	if err != nil {
		return "", "bad quoted value " + quote(v[:end+1]) + ": " + err.Error()
	}
	return u, ""
}

// closingQuote returns the index of the '"' that closes the quoted string
// at the start of v, skipping escaped characters, or -1.
func closingQuote(v string) int {
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// checkValue rejects values that are not valid UTF-8 or contain control characters other
// than tab.
func checkValue(v string) string {
	if !utf8.ValidString(v) {
		return "invalid UTF-8"
	}
	for _, r := range v {
		if r != '\t' && unicode.IsControl(r) {
			return fmt.Sprintf("control character %U", r)
		}
	}
	return ""
}

// quote returns s quoted for an error message, shortened to maxQuoted bytes.
func quote(s string) string {
	if len(s) > maxQuoted {
		cut := maxQuoted
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q...", s[:cut])
	}
	return fmt.Sprintf("%q", s)
}
