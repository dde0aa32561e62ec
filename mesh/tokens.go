package mesh

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"

	"github.com/rsbd/rsbd/scope"
)

// ErrBadToken: a Token is empty, has white space or control characters,
// is listed twice or has a prefix that is not a scope.
var ErrBadToken = errors.New("mesh: bad token")

// Token is a bearer token and the scopes it may use, the same for every
// gateway listener. A token may publish on a scope within one of its
// Publish prefixes, and subscribe to a scope within one of its Subscribe
// prefixes: a subscription must lie within an allowed prefix as a whole,
// so a token limited to /robot/arm/ may not subscribe to /robot/ even
// though some of /robot/'s events would be allowed.
type Token struct {
	// Value is the token as clients send it; not empty, no white space.
	Value string
	// Publish lists the scopes under which the token may publish.
	Publish []string
	// Subscribe lists the scopes under which the token may subscribe.
	Subscribe []string
}

// Grant is a token as a listener checks it: its digest and its prefixes
// parsed. A nil *Grant stands for "no tokens configured" and allows
// everything.
type Grant struct {
	digest   [sha256.Size]byte
	pub, sub []scope.Scope
}

// Tokens is a listener's parsed token set; empty means no authentication.
// A Tokens is immutable, safe for concurrent use.
type Tokens struct {
	grants []Grant
}

// ParseTokens checks tokens and returns them as a set; an error wraps
// ErrBadToken and names the token by its index, never by its value.
func ParseTokens(tokens []Token) (*Tokens, error) {
	out := &Tokens{grants: make([]Grant, 0, len(tokens))}
	seen := map[[sha256.Size]byte]bool{}
	for i, t := range tokens {
		if t.Value == "" || strings.ContainsFunc(t.Value, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return nil, fmt.Errorf("%w: token %d is empty or has white space or control characters", ErrBadToken, i)
		}
		g := Grant{digest: sha256.Sum256([]byte(t.Value))}
		if seen[g.digest] {
			return nil, fmt.Errorf("%w: token %d is configured twice", ErrBadToken, i)
		}
		seen[g.digest] = true
		var err error
		if g.pub, err = parsePrefixes(t.Publish); err == nil {
			g.sub, err = parsePrefixes(t.Subscribe)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: token %d: %w", ErrBadToken, i, err)
		}
		out.grants = append(out.grants, g)
	}
	return out, nil
}

// parsePrefixes parses scope prefixes.
func parsePrefixes(ps []string) ([]scope.Scope, error) {
	out := make([]scope.Scope, 0, len(ps))
	for _, p := range ps {
		sc, err := scope.Parse(p)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// Required reports whether the set holds tokens, so that clients must
// present one; a nil or empty set requires none.
func (ts *Tokens) Required() bool { return ts != nil && len(ts.grants) > 0 }

// Lookup returns the grant of the token presented, nil for none. Every
// token's digest is compared, in constant time and without stopping at a
// match, so the time taken tells nothing about which token, or how much
// of one, matched; comparing digests makes every comparison the same
// length whatever the lengths of the tokens.
func (ts *Tokens) Lookup(presented string) *Grant {
	if ts == nil {
		return nil
	}
	d := sha256.Sum256([]byte(presented))
	found := -1
	for i := range ts.grants {
		if subtle.ConstantTimeCompare(d[:], ts.grants[i].digest[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return nil
	}
	return &ts.grants[found]
}

// MayPublish reports whether the grant may publish on sc; a nil grant
// (no tokens configured) may.
func (g *Grant) MayPublish(sc scope.Scope) bool { return g == nil || within(sc, g.pub) }

// MaySubscribe reports whether the grant may subscribe to sc and its
// sub-scopes; a nil grant (no tokens configured) may.
func (g *Grant) MaySubscribe(sc scope.Scope) bool { return g == nil || within(sc, g.sub) }

// within reports whether sc lies within one of prefixes.
func within(sc scope.Scope, prefixes []scope.Scope) bool {
	for _, p := range prefixes {
		if p.Contains(sc) {
			return true
		}
	}
	return false
}
