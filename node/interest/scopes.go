package interest

import (
	"slices"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// Minimal drops every scope contained in another one of the list (and
// repeats), so that an event reaches this host through exactly one of its
// groups. It sorts in by length and costs O(len(in) · depth).
func Minimal(in []scope.Scope) []scope.Scope {
	slices.SortFunc(in, func(a, b scope.Scope) int { return len(a.String()) - len(b.String()) })
	var out []scope.Scope
	kept := make(map[scope.Scope]struct{}, len(in))
	var supers []scope.Scope
	for _, s := range in {
		// A scope containing s is one of its super-scopes (or s itself)
		// and, being shorter or equal, was seen before it.
		supers = s.AppendSuperScopes(supers[:0], true)
		covered := false
		for _, p := range supers {
			if _, ok := kept[p]; ok {
				covered = true
				break
			}
		}
		if !covered {
			kept[s] = struct{}{}
			out = append(out, s)
		}
	}
	return out
}

// GroupIDs returns the group ids of scopes in the order of scopes.
func GroupIDs(scopes []scope.Scope) []datagram.GroupID {
	ids := make([]datagram.GroupID, 0, len(scopes))
	for _, s := range scopes {
		ids = append(ids, group.ID(s))
	}
	return ids
}

// Set is a set of scopes for containment checks in O(depth).
type Set map[scope.Scope]struct{}

// NewSet returns the set of scopes.
func NewSet(scopes []scope.Scope) Set {
	m := make(Set, len(scopes))
	for _, s := range scopes {
		m[s] = struct{}{}
	}
	return m
}

// Covers reports whether a scope of the set contains s.
func (m Set) Covers(s scope.Scope) bool {
	var buf [8]scope.Scope
	for _, p := range s.AppendSuperScopes(buf[:0], true) {
		if _, ok := m[p]; ok {
			return true
		}
	}
	return false
}

// Covered reports whether one of scopes contains s.
func Covered(scopes []scope.Scope, s scope.Scope) bool {
	for _, c := range scopes {
		if c.Contains(s) {
			return true
		}
	}
	return false
}
