package scope

import (
	"errors"
	"fmt"
	"strings"
)

// ReservedPrefix is the scope below which everything is reserved for the RSB
// implementation itself (introspection).
const ReservedPrefix = "/__rsb/"

// ErrInvalid is wrapped by every error Parse returns.
var ErrInvalid = errors.New("scope: invalid scope")

// Root is the root scope "/", a super-scope of every other scope.
var Root = Scope{s: "/"}

// Scope is a validated RSB scope in normalized form (with trailing slash).
//
// The zero value is not a valid scope: it is only useful as "no scope", which
// IsZero reports. Obtain scopes from Parse, MustParse, Root or Concat. Scopes
// are comparable with == and usable as map keys.
type Scope struct {
	s string
}

// Parse validates s and returns its normalized scope. The trailing slash may
// be omitted. Errors wrap ErrInvalid and say what is wrong and where.
func Parse(s string) (Scope, error) {
	if s == "" {
		return Scope{}, fmt.Errorf("%w: empty string", ErrInvalid)
	}
	if s[0] != '/' {
		return Scope{}, fmt.Errorf("%w: %q does not start with '/'", ErrInvalid, s)
	}
	for i := 1; i < len(s); i++ {
		switch charClasses[s[i]] {
		case classComponent:
		case classSlash:
			if s[i-1] == '/' {
				return Scope{}, fmt.Errorf("%w: empty component (//) at byte %d of %q", ErrInvalid, i, s)
			}
		default:
			return Scope{}, fmt.Errorf("%w: character %q at byte %d of %q", ErrInvalid, s[i:i+1], i, s)
		}
	}
	if s[len(s)-1] != '/' {
		s += "/"
	}
	return Scope{s: s}, nil
}

// MustParse is like Parse but panics if s is not a valid scope. It is meant
// for constants in code and tests, never for input from the network.
func MustParse(s string) Scope {
	sc, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return sc
}

// isComponentChar reports whether c is allowed in a scope component.
func isComponentChar(c byte) bool {
	return c == '-' || c == '_' ||
		('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// Byte classes of a scope's characters, for Parse: one table lookup per
// byte instead of a chain of range tests, which is faster on scopes that
// vary (go test -bench ParseVaried).
const (
	classInvalid   = iota // not allowed in a scope
	classComponent        // allowed in a component (isComponentChar)
	classSlash            // the separator
)

// charClasses maps every byte to its class.
var charClasses = func() (t [256]uint8) {
	for c := range 256 {
		if isComponentChar(byte(c)) {
			t[c] = classComponent
		}
	}
	t['/'] = classSlash
	return t
}()

// String returns the normalized form with trailing slash ("/" for the root).
// The zero Scope returns "".
func (s Scope) String() string { return s.s }

// IsZero reports whether s is the zero value (no scope).
func (s Scope) IsZero() bool { return s.s == "" }

// Components returns the components of s in order; the root has none.
func (s Scope) Components() []string {
	if len(s.s) <= 1 {
		return nil
	}
	return strings.Split(s.s[1:len(s.s)-1], "/")
}

// SuperScopes returns the super-scopes of s, root first, ending with s itself
// when includeSelf is set: /a/b/ gives /, /a/ and (with self) /a/b/.
func (s Scope) SuperScopes(includeSelf bool) []Scope {
	return s.AppendSuperScopes(make([]Scope, 0, strings.Count(s.s, "/")), includeSelf)
}

// AppendSuperScopes appends the super-scopes of s to dst like SuperScopes
// and returns the extended slice. The appended scopes share the string of s,
// so apart from growing dst nothing is allocated.
func (s Scope) AppendSuperScopes(dst []Scope, includeSelf bool) []Scope {
	for i := 0; i < len(s.s)-1; i++ {
		if s.s[i] == '/' {
			dst = append(dst, Scope{s: s.s[:i+1]})
		}
	}
	if includeSelf && s.s != "" {
		dst = append(dst, s)
	}
	return dst
}

// IsSubScopeOf reports whether s lies strictly below o: /a/b/ is a sub-scope
// of /a/ and of /, but not of itself.
func (s Scope) IsSubScopeOf(o Scope) bool {
	return o.s != "" && len(s.s) > len(o.s) && strings.HasPrefix(s.s, o.s)
}

// Contains reports whether o equals s or is a sub-scope of s. A listener on s
// receives the events published on every scope s contains.
func (s Scope) Contains(o Scope) bool {
	return s.s != "" && strings.HasPrefix(o.s, s.s)
}

// Concat returns s with the components of o appended: /a/ concatenated with
// /b/c/ is /a/b/c/. Concatenating the root changes nothing. A zero operand is
// treated as the root.
func (s Scope) Concat(o Scope) Scope {
	switch {
	case len(o.s) <= 1:
		if s.s == "" {
			return Root
		}
		return s
	case len(s.s) <= 1:
		return o
	}
	return Scope{s: s.s + o.s[1:]}
}

// IsReserved reports whether s is ReservedPrefix or below it.
func (s Scope) IsReserved() bool { return strings.HasPrefix(s.s, ReservedPrefix) }

// ComponentFromText derives a scope component from arbitrary text by
// replacing every character that is not in [-_a-zA-Z0-9] with '_'. A
// multi-byte UTF-8 character becomes one '_', an invalid byte one '_' each.
// Empty text gives "", which is not a valid component on its own.
func ComponentFromText(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		if r < 0x80 && isComponentChar(byte(r)) {
			b.WriteByte(byte(r))
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
