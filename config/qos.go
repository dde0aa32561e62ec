package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Reliability is RSB's reliability dimension of quality of service. The values are RSB's
// (higher is better); the zero value means "not specified".
type Reliability uint8

// Reliability values.
const (
	Unreliable Reliability = 10
	Reliable   Reliability = 20
)

// String returns the RSB spelling, UNRELIABLE or RELIABLE.
func (r Reliability) String() string {
	switch r {
	case Unreliable:
		return "UNRELIABLE"
	case Reliable:
		return "RELIABLE"
	}
	return fmt.Sprintf("Reliability(%d)", uint8(r))
}

// Ordering is RSB's ordering dimension of quality of service. The values are RSB's (higher
// is better); the zero value means "not specified".
type Ordering uint8

// Ordering values.
const (
	Unordered Ordering = 10
	Ordered   Ordering = 20
)

// String returns the RSB spelling, UNORDERED or ORDERED.
func (o Ordering) String() string {
	switch o {
	case Unordered:
		return "UNORDERED"
	case Ordered:
		return "ORDERED"
	}
	return fmt.Sprintf("Ordering(%d)", uint8(o))
}

// QoS is a quality of service specification.
type QoS struct {
	Reliability Reliability
	Ordering    Ordering
}

// DefaultQoS is RSB's default: RELIABLE and UNORDERED.
var DefaultQoS = QoS{Reliability: Reliable, Ordering: Unordered}

// ScopeQoS is a per-scope QoS override: events published on Scope or its sub-scopes use
// QoS unless a longer scope has its own entry.
type ScopeQoS struct {
	Scope string // normalized RSB scope with trailing '/'
	QoS   QoS
}

// ParseReliability parses UNRELIABLE or RELIABLE, ignoring case and surrounding spaces.
func ParseReliability(s string) (Reliability, bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "UNRELIABLE":
		return Unreliable, true
	case "RELIABLE":
		return Reliable, true
	}
	return 0, false
}

// ParseOrdering parses UNORDERED or ORDERED, ignoring case and surrounding spaces.
func ParseOrdering(s string) (Ordering, bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "UNORDERED":
		return Unordered, true
	case "ORDERED":
		return Ordered, true
	}
	return 0, false
}

// QoS returns the global QoS from qualityofservice.reliability and
// qualityofservice.ordering, each defaulting to DefaultQoS. Other values yield DefaultQoS
// and a *ValueError wrapping ErrBadValue.
func (c *Config) QoS() (QoS, error) {
	q := DefaultQoS
	if v, ok := c.Get(KeyReliability); ok {
		r, ok := ParseReliability(v.String)
		if !ok {
			return DefaultQoS, valueError(KeyReliability, v, "UNRELIABLE or RELIABLE", nil)
		}
		q.Reliability = r
	}
	if v, ok := c.Get(KeyOrdering); ok {
		o, ok := ParseOrdering(v.String)
		if !ok {
			return DefaultQoS, valueError(KeyOrdering, v, "UNORDERED or ORDERED", nil)
		}
		q.Ordering = o
	}
	return q, nil
}

// ScopeQoS returns the per-scope QoS overrides, the keys "rsbd.qos./scope/" (written as
// "/scope/ = RELIABLE,ORDERED" in a [rsbd.qos] section), sorted by scope. A value lists
// one or both dimensions separated by commas in any order; a dimension left out is taken
// from the global QoS. Bad scopes, unknown words, a dimension given twice and two
// spellings of one scope ("/a" and "/a/") yield an error wrapping ErrBadValue.
func (c *Config) ScopeQoS() ([]ScopeQoS, error) {
	global, err := c.QoS()
	if err != nil {
		return nil, err
	}
	sub := c.Sub(KeyScopeQoS)
	var out []ScopeQoS
	seen := make(map[string]string)
	for _, k := range sub.Keys() {
		if !strings.HasPrefix(k, "/") {
			continue
		}
		v, _ := sub.Get(k)
		full := KeyScopeQoS + "." + k
		scope, ok := normalizeScope(k)
		if !ok {
			return nil, valueError(full, v, "a key naming a valid RSB scope", nil)
		}
		if prev, dup := seen[scope]; dup {
			return nil, valueError(full, v, "one entry per scope (also given as "+prev+")", nil)
		}
		seen[scope] = full
		q, err := parseScopeQoS(v.String, global)
		if err != nil {
			return nil, valueError(full, v, "RELIABLE or UNRELIABLE and/or ORDERED or UNORDERED", err)
		}
		out = append(out, ScopeQoS{Scope: scope, QoS: q})
	}
	slices.SortFunc(out, func(a, b ScopeQoS) int { return cmp.Compare(a.Scope, b.Scope) })
	return out, nil
}

// parseScopeQoS parses "RELIABLE,ORDERED" and similar, filling gaps from base.
func parseScopeQoS(s string, base QoS) (QoS, error) {
	items := splitList(s)
	if len(items) == 0 || len(items) > 2 {
		return QoS{}, fmt.Errorf("%d items", len(items))
	}
	q := base
	var gotR, gotO bool
	for _, it := range items {
		if r, ok := ParseReliability(it); ok && !gotR {
			q.Reliability, gotR = r, true
		} else if o, ok := ParseOrdering(it); ok && !gotO {
			q.Ordering, gotO = o, true
		} else {
			return QoS{}, fmt.Errorf("unexpected %q", it)
		}
	}
	return q, nil
}

// normalizeScope validates an RSB scope (/([-_a-zA-Z0-9]+/)*, trailing '/' optional)
// and returns it with the trailing '/'.
func normalizeScope(s string) (string, bool) {
	if !strings.HasPrefix(s, "/") {
		return "", false
	}
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	if s == "/" {
		return s, true
	}
	for comp := range strings.SplitSeq(s[1:len(s)-1], "/") {
		if comp == "" || strings.IndexFunc(comp, notScopeRune) >= 0 {
			return "", false
		}
	}
	return s, true
}

// notScopeRune reports whether r may not appear in a scope component.
func notScopeRune(r rune) bool {
	return !(r == '-' || r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
}
