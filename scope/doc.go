// Package scope owns the syntax of RSB scopes: parsing, validation and
// normalization of scope strings, super-scope enumeration and the sub-scope
// relation used for listener matching.
//
// A scope is a path of components such as /robot/arm/ that names where events
// are published. The RSB specification defines the valid strings by the regular
// expression /([-_a-zA-Z0-9]+/)* ; components are case-sensitive ASCII and the
// empty component (//) is invalid. User interfaces may omit the trailing slash,
// but network protocols and hash keys always use the normalized form with the
// trailing slash; the root scope is "/". Scopes under /__rsb/ are reserved for
// the implementation (introspection).
//
// A listener on scope S receives events whose scope E equals S or is a
// sub-scope of S; Contains expresses that test. SuperScopes and the
// allocation-free AppendSuperScopes enumerate the scopes an event on E is
// delivered to, root first.
//
// Cache remembers the last few scopes parsed from wire bytes, for the
// decoders of notifications and socket frames.
//
// The package imports nothing of rsbd.
package scope
