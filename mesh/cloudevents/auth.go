package cloudevents

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/rsbd/rsbd/mesh"
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

// Token is a bearer token and the scopes it may use (see mesh.Token),
// shared by every gateway listener.
type Token = mesh.Token

// grant is a token as the gateway checks it; nil: no tokens configured.
type grant = mesh.Grant

// parseTokens checks tokens and returns them as a set.
func parseTokens(tokens []Token) (*mesh.Tokens, error) {
	ts, err := mesh.ParseTokens(tokens)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return ts, nil
}

// SetTokens replaces the gateway's tokens, for requests from then on; an
// empty list turns authentication off. Subscriptions already open are
// kept. An invalid list changes nothing.
func (g *Gateway) SetTokens(tokens []Token) error {
	ts, err := parseTokens(tokens)
	if err != nil {
		return err
	}
	g.tokens.Store(ts)
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
	ts := g.tokens.Load()
	if !ts.Required() {
		return r
	}
	var gr *grant
	if tok, ok := presentedToken(r); ok {
		gr = ts.Lookup(tok)
	}
	if gr == nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="rsbd"`)
		g.fail(w, http.StatusUnauthorized, reasonNoToken, ErrUnauthorized.Error())
		return nil
	}
	allowed := gr.MaySubscribe(sc)
	if r.Method == http.MethodPost {
		allowed = gr.MayPublish(sc)
	}
	if !allowed {
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
	ts := g.tokens.Load()
	if !ts.Required() {
		return nil, true
	}
	var gr *grant
	if tok, ok := presentedToken(r); ok {
		gr = ts.Lookup(tok)
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
	return gr.MaySubscribe(sc) && (!hasDeadLetter || gr.MayPublish(deadLetter))
}

// grantKey is the context key of a subscription's grant.
type grantKey struct{}

// checkPublish refuses publishing on sc from a WebSocket whose token may
// not publish there; requests without a grant in ctx were checked before.
func checkPublish(ctx context.Context, sc scope.Scope) error {
	gr, _ := ctx.Value(grantKey{}).(*grant)
	if gr.MayPublish(sc) {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrForbidden, sc)
}
