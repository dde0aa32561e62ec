package cloudevents

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/rsbd/rsbd/scope"
)

// Errors of the token check.
var (
	// ErrUnauthorized reports a request without a bearer token, or with
	// one the gateway does not know (401).
	ErrUnauthorized = errors.New("cloudevents: missing or unknown bearer token")
	// ErrForbidden reports a known token used outside the scope prefixes
	// it may publish to or subscribe from (403).
	ErrForbidden = errors.New("cloudevents: scope not allowed for this token")
)

// Token is a bearer token and the scopes it may use. A token may publish
// on a scope within one of its Publish prefixes, and subscribe to a scope
// within one of its Subscribe prefixes: a subscription must lie within an
// allowed prefix as a whole, so a token limited to /robot/arm/ may not
// subscribe to /robot/ even though some of /robot/'s events would be
// allowed.
type Token struct {
	// Value is the token as clients send it; not empty, no white space.
	Value string
	// Publish lists the scopes under which the token may publish.
	Publish []string
	// Subscribe lists the scopes under which the token may subscribe.
	Subscribe []string
}

// grant is a token as the gateway checks it: its digest and its prefixes
// parsed.
type grant struct {
	digest   [sha256.Size]byte
	pub, sub []scope.Scope
}

// tokenSet is the gateway's tokens; empty means no authentication.
type tokenSet []grant

// parseTokens checks tokens and returns them as grants.
func parseTokens(tokens []Token) (tokenSet, error) {
	out := make(tokenSet, 0, len(tokens))
	seen := map[[sha256.Size]byte]bool{}
	for i, t := range tokens {
		if t.Value == "" || strings.ContainsFunc(t.Value, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return nil, fmt.Errorf("%w: token %d is empty or has white space or control characters", ErrConfig, i)
		}
		g := grant{digest: sha256.Sum256([]byte(t.Value))}
		if seen[g.digest] {
			return nil, fmt.Errorf("%w: token %d is configured twice", ErrConfig, i)
		}
		seen[g.digest] = true
		var err error
		if g.pub, err = parsePrefixes(t.Publish); err == nil {
			g.sub, err = parsePrefixes(t.Subscribe)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: token %d: %v", ErrConfig, i, err)
		}
		out = append(out, g)
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

// lookup returns the grant of the token presented, nil for none. Every
// token's digest is compared, in constant time and without stopping at a
// match, so the time taken tells nothing about which token, or how much
// of one, matched; comparing digests makes every comparison the same
// length whatever the lengths of the tokens.
func (ts tokenSet) lookup(presented string) *grant {
	d := sha256.Sum256([]byte(presented))
	found := -1
	for i := range ts {
		if subtle.ConstantTimeCompare(d[:], ts[i].digest[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return nil
	}
	return &ts[found]
}

// within reports whether sc lies within one of prefixes.
func within(sc scope.Scope, prefixes []scope.Scope) bool {
	for _, p := range prefixes {
		if p.Contains(sc) {
			return true
		}
	}
	return false
}

// SetTokens replaces the gateway's tokens, for requests from then on; an
// empty list turns authentication off. Subscriptions already open are
// kept. An invalid list changes nothing.
func (g *Gateway) SetTokens(tokens []Token) error {
	ts, err := parseTokens(tokens)
	if err != nil {
		return err
	}
	g.tokens.Store(&ts)
	return nil
}

// presentedToken returns the bearer token of r: its Authorization header,
// or for a GET without one its access_token query parameter, as browsers
// cannot set headers on a WebSocket or an EventSource.
func presentedToken(r *http.Request) (string, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", false
		}
		return strings.TrimSpace(tok), true
	}
	if r.Method == http.MethodGet {
		if tok := r.URL.Query().Get(accessTokenParam); tok != "" {
			return tok, true
		}
	}
	return "", false
}

// authorize checks r's token for publishing (POST) or subscribing (GET)
// on sc; it replies and counts a refusal and returns nil, or returns the
// request to serve (carrying the grant for the messages of a WebSocket).
func (g *Gateway) authorize(w http.ResponseWriter, r *http.Request, sc scope.Scope) *http.Request {
	ts := *g.tokens.Load()
	if len(ts) == 0 {
		return r
	}
	var gr *grant
	if tok, ok := presentedToken(r); ok {
		gr = ts.lookup(tok)
	}
	if gr == nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="rsbd"`)
		g.fail(w, http.StatusUnauthorized, reasonNoToken, ErrUnauthorized.Error())
		return nil
	}
	allowed := gr.sub
	if r.Method == http.MethodPost {
		allowed = gr.pub
	}
	if !within(sc, allowed) {
		g.fail(w, http.StatusForbidden, reasonForbidden, fmt.Sprintf("%v: %s", ErrForbidden, sc))
		return nil
	}
	if r.Method == http.MethodGet {
		r = r.WithContext(context.WithValue(r.Context(), grantKey{}, gr))
	}
	return r
}

// adminGrant checks the token of a request to the gateway's own API
// (AdminPrefix). Without tokens configured it returns nil and true; with
// them, a request without a valid token gets 401 and false. A webhook
// subscribes on its scope and publishes on its dead-letter scope, so
// createWebhook checks those against the grant's prefixes (webhookAllowed).
func (g *Gateway) adminGrant(w http.ResponseWriter, r *http.Request) (*grant, bool) {
	ts := *g.tokens.Load()
	if len(ts) == 0 {
		return nil, true
	}
	var gr *grant
	if tok, ok := presentedToken(r); ok {
		gr = ts.lookup(tok)
	}
	if gr == nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="rsbd"`)
		g.fail(w, http.StatusUnauthorized, reasonNoToken, ErrUnauthorized.Error())
		return nil, false
	}
	return gr, true
}

// webhookAllowed reports whether grant gr (nil: no tokens configured) may
// create a webhook on sc whose undeliverable events go to deadLetter
// (the zero scope: none): it subscribes on the one and publishes on the
// other.
func webhookAllowed(gr *grant, sc, deadLetter scope.Scope, hasDeadLetter bool) bool {
	if gr == nil {
		return true
	}
	return within(sc, gr.sub) && (!hasDeadLetter || within(deadLetter, gr.pub))
}

// grantKey is the context key of a subscription's grant.
type grantKey struct{}

// checkPublish refuses publishing on sc from a WebSocket whose token may
// not publish there; requests without a grant in ctx were checked before.
func checkPublish(ctx context.Context, sc scope.Scope) error {
	gr, _ := ctx.Value(grantKey{}).(*grant)
	if gr == nil || within(sc, gr.pub) {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrForbidden, sc)
}
