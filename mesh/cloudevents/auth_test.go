package cloudevents

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
)

// authConfig has a token limited to /robot/ and one limited to
// /robot/arm/ (subscribing) with publishing nowhere.
func authConfig() Config {
	return Config{Tokens: []Token{
		{Value: "robot-token", Publish: []string{"/robot/"}, Subscribe: []string{"/robot/"}},
		{Value: "arm-reader", Subscribe: []string{"/robot/arm/"}},
	}}
}

// request sends method on path with the token (none when empty) and
// returns the response, its body closed.
func (e *env) request(t *testing.T, method, path, token string) *http.Response {
	t.Helper()
	var body *strings.Reader
	if method == http.MethodPost {
		body = strings.NewReader("x")
	} else {
		body = strings.NewReader("")
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, e.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = http.Header{"Content-Type": {"text/plain"}, "Ce-Specversion": {"1.0"}, "Ce-Id": {"1"},
		"Ce-Source": {"/test"}, "Ce-Type": {"t"}}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, _ := testutil.Do(t, e.srv.Client(), req)
	return resp
}

// Requests without a known token get 401 with WWW-Authenticate, a known
// token outside its prefixes 403, and each refusal is counted.
func TestTokenCheck(t *testing.T) {
	e := start(t, authConfig())
	for _, c := range []struct {
		method, path, token string
		want                int
	}{
		{http.MethodPost, "/robot/", "", http.StatusUnauthorized},
		{http.MethodPost, "/robot/", "wrong", http.StatusUnauthorized},
		{http.MethodPost, "/robot/", "robot-token-longer", http.StatusUnauthorized},
		{http.MethodGet, "/robot/", "", http.StatusUnauthorized},
		{http.MethodPost, "/other/", "robot-token", http.StatusForbidden},
		{http.MethodGet, "/other/", "robot-token", http.StatusForbidden},
		{http.MethodPost, "/robot/arm/", "arm-reader", http.StatusForbidden},
		{http.MethodGet, "/robot/", "arm-reader", http.StatusForbidden},
		{http.MethodPost, "/robot/arm/", "robot-token", http.StatusAccepted},
		{http.MethodPost, "/robot/", "robot-token", http.StatusAccepted},
	} {
		resp := e.request(t, c.method, c.path, c.token)
		if resp.StatusCode != c.want {
			t.Errorf("%s %s token %q: %d, want %d", c.method, c.path, c.token, resp.StatusCode, c.want)
		}
		if got := resp.Header.Get("WWW-Authenticate"); (c.want == http.StatusUnauthorized) != strings.HasPrefix(got, "Bearer") {
			t.Errorf("%s %s token %q: WWW-Authenticate %q", c.method, c.path, c.token, got)
		}
	}
	st := e.g.Stats()
	if st.Rejected["unauthorized"] != 4 || st.Rejected["forbidden"] != 4 || st.Published != 2 {
		t.Errorf("stats %+v", st)
	}
}

// A token limited to /robot/arm/ may subscribe there (SSE) and not above.
func TestTokenSubscribeWithin(t *testing.T) {
	e := start(t, authConfig())
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/robot/arm/", nil)
	req.Header.Set("Authorization", "bearer arm-reader")
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("SSE on /robot/arm/: %d", resp.StatusCode)
	}
	e.waitSubscribers(t, 1)
}

// Without tokens configured nothing is checked; SetTokens turns the check
// on for the requests that follow and refuses an invalid list.
func TestSetTokens(t *testing.T) {
	e := start(t, Config{})
	if resp := e.request(t, http.MethodPost, "/a/", ""); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("no tokens: %d", resp.StatusCode)
	}
	if err := e.g.SetTokens([]Token{{Value: "a b"}}); !errors.Is(err, ErrConfig) {
		t.Fatalf("token with a space: %v", err)
	}
	if err := e.g.SetTokens([]Token{{Value: "t", Publish: []string{"no-scope"}}}); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad prefix: %v", err)
	}
	if err := e.g.SetTokens([]Token{{Value: "t", Publish: []string{"/a/"}}}); err != nil {
		t.Fatal(err)
	}
	if resp := e.request(t, http.MethodPost, "/a/", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("after SetTokens, no token: %d", resp.StatusCode)
	}
	if resp := e.request(t, http.MethodPost, "/a/", "t"); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("after SetTokens: %d", resp.StatusCode)
	}
	if err := (Config{Tokens: []Token{{Value: "x"}, {Value: "x"}}}).Validate(); !errors.Is(err, ErrConfig) {
		t.Fatalf("duplicate token: %v", err)
	}
}

// A WebSocket takes its token from the access_token query parameter (as
// browsers send it); without one the upgrade gets 401. A message it sends
// outside the token's publish prefixes is refused and counted.
func TestTokenWebSocketQuery(t *testing.T) {
	cfg := authConfig()
	cfg.Tokens = append(cfg.Tokens, Token{Value: "ws", Publish: []string{"/robot/out/"}, Subscribe: []string{"/robot/"}})
	e := start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	base := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/robot/"
	opts := &websocket.DialOptions{Subprotocols: []string{Subprotocol}}
	_, resp, err := websocket.Dial(ctx, base, opts)
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("WebSocket without token: %v %v", err, resp)
	}
	c, _, err := websocket.Dial(ctx, base+"?"+url.Values{"access_token": {"ws"}}.Encode(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	e.waitSubscribers(t, 1)
	rd := e.reader(t, "/robot/")
	for _, subject := range []string{"/robot/in/", "/robot/out/"} {
		msg, err := cloudevent.Marshal(&cloudevent.Event{ID: subject, Source: "/t", Type: "t", Subject: subject})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
			t.Fatal(err)
		}
	}
	if ev := read(t, rd); ev.Scope.String() != "/robot/out/" {
		t.Errorf("published %s, want only /robot/out/", ev.Scope)
	}
	if n := e.g.Stats().Rejected["forbidden"]; n != 1 {
		t.Errorf("forbidden %d, want 1", n)
	}
	// A POST may not carry the token in the query.
	if resp := e.request(t, http.MethodPost, "/robot/out/?access_token=ws", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST with query token: %d", resp.StatusCode)
	}
}
