package scope

import (
	"strings"
	"unsafe"
)

// ParseShared returns what Parse(string(b)) returns. When b already holds
// a scope in normalized form (with its trailing slash), the Scope shares
// b's memory instead of copying it: b must then never change, and the
// Scope keeps all of b's allocation alive. It is meant for decoders whose
// every message has a buffer of its own that nobody modifies.
func ParseShared(b []byte) (Scope, error) {
	if len(b) == 0 || b[len(b)-1] != '/' {
		return Parse(string(b))
	}
	sc, err := Parse(unsafe.String(&b[0], len(b)))
	if err != nil {
		return Parse(string(b)) // an error of its own, not holding b
	}
	return sc, nil
}

// Clone returns a Scope equal to sc that shares no memory with it, for
// keeping a scope from ParseShared beyond its buffer's life.
func Clone(sc Scope) Scope { return Scope{s: strings.Clone(sc.s)} }
