package cloudevents

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
)

// TestWebhookAPINeedsAToken: with tokens configured, the webhook API
// refuses a request without a token (401), a webhook on a scope the token
// may not subscribe to or with a dead-letter scope it may not publish to
// (403), and creates one within its prefixes (201); each refusal counts.
func TestWebhookAPINeedsAToken(t *testing.T) {
	e := start(t, authConfig())
	create := func(token, body string) int {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+WebhooksPath, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, _ := testutil.Do(t, e.srv.Client(), req)
		return resp.StatusCode
	}
	hook := func(sc, dead string) string {
		b := `{"scope":"` + sc + `","url":"http://127.0.0.1:1/hook"`
		if dead != "" {
			b += `,"deadLetter":"` + dead + `"`
		}
		return b + "}"
	}
	for _, c := range []struct {
		token, body string
		want        int
	}{
		{"", hook("/robot/", ""), http.StatusUnauthorized},
		{"wrong", hook("/robot/", ""), http.StatusUnauthorized},
		{"robot-token", hook("/other/", ""), http.StatusForbidden},
		{"robot-token", hook("/robot/", "/dead/"), http.StatusForbidden},
		{"arm-reader", hook("/robot/arm/", "/robot/dead/"), http.StatusForbidden},
		{"robot-token", hook("/robot/arm/", "/robot/dead/"), http.StatusCreated},
		{"arm-reader", hook("/robot/arm/", ""), http.StatusCreated},
	} {
		if got := create(c.token, c.body); got != c.want {
			t.Errorf("token %q, %s: status %d, want %d", c.token, c.body, got, c.want)
		}
	}
	if got := e.request(t, http.MethodGet, WebhooksPath, "").StatusCode; got != http.StatusUnauthorized {
		t.Errorf("listing without a token: %d", got)
	}
	if got := e.request(t, http.MethodGet, WebhooksPath, "arm-reader").StatusCode; got != http.StatusOK {
		t.Errorf("listing with a token: %d", got)
	}
	r := e.g.Stats().Rejected
	if r["unauthorized"] < 3 || r["forbidden"] < 3 {
		t.Errorf("refusals not counted: %v", r)
	}
}
