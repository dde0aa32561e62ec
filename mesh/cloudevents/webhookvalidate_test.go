package cloudevents

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
)

// handshakeTarget is a webhook target that answers OPTIONS with allow
// (nil: as any other request, it does not implement the handshake) and
// records the methods and origins it saw, in order.
type handshakeTarget struct {
	allow   func(origin string) string
	mu      sync.Mutex
	methods []string
	origins []string
}

func (h *handshakeTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.methods = append(h.methods, r.Method)
	h.origins = append(h.origins, r.Header.Get("WebHook-Request-Origin"))
	h.mu.Unlock()
	if r.Method == http.MethodOptions && h.allow != nil {
		w.Header().Set("WebHook-Allowed-Origin", h.allow(r.Header.Get("WebHook-Request-Origin")))
	}
	w.WriteHeader(http.StatusOK)
}

// seen returns the methods the target saw.
func (h *handshakeTarget) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.methods...)
}

// postHook publishes one event on /hook/ through the gateway.
func postHook(t *testing.T, e *env, id string) {
	t.Helper()
	body := `{"specversion":"1.0","id":"` + id + `","source":"/s","type":"t"}`
	if status, reply := e.post(t, "/hook/", cloudevent.MediaType, body, nil); status != http.StatusAccepted {
		t.Fatalf("%d %s", status, reply)
	}
}

// A target allowing the webhook's origin gets the OPTIONS request first,
// carrying that origin, and the events after it.
func TestWebhookHandshakeAllowed(t *testing.T) {
	e := start(t, Config{})
	h := &handshakeTarget{allow: func(origin string) string { return origin }}
	target := httptest.NewServer(h)
	defer target.Close()
	wh, err := e.g.AddWebhook(WebhookConfig{Scope: "/hook/", URL: target.URL, Origin: "gw.example"})
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	postHook(t, e, "1")
	testutil.WaitFor(t, waitTimeout, "delivery", func() bool { return wh.Stats().Delivered == 1 })
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.methods) != 2 || h.methods[0] != http.MethodOptions || h.methods[1] != http.MethodPost || h.origins[0] != "gw.example" {
		t.Errorf("target saw %v from %q", h.methods, h.origins)
	}
}

// A target allowing another origin ends the webhook before any delivery:
// Close says why and the gateway counts it.
func TestWebhookHandshakeRefused(t *testing.T) {
	e := start(t, Config{})
	h := &handshakeTarget{allow: func(string) string { return "someone-else.example" }}
	target := httptest.NewServer(h)
	defer target.Close()
	wh, err := e.g.AddWebhook(WebhookConfig{Scope: "/hook/", URL: target.URL, Origin: "gw.example"})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, waitTimeout, "webhook ended", func() bool { return e.g.Stats().WebhooksEnded["refused"] == 1 })
	if err := wh.Close(); !errors.Is(err, ErrWebhookRefused) {
		t.Errorf("Close: %v", err)
	}
	if got := h.seen(); len(got) != 1 || got[0] != http.MethodOptions {
		t.Errorf("target saw %v", got)
	}
}

// A target that does not implement the handshake (OPTIONS answered 200
// without WebHook-Allowed-Origin) refuses it by default; with
// SkipValidation it gets the events without an OPTIONS request.
func TestWebhookHandshakeIgnored(t *testing.T) {
	e := start(t, Config{})
	h := &handshakeTarget{}
	target := httptest.NewServer(h)
	defer target.Close()
	wh, err := e.g.AddWebhook(WebhookConfig{Scope: "/hook/", URL: target.URL})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, waitTimeout, "webhook ended", func() bool { return e.g.Stats().WebhooksEnded["refused"] == 1 })
	if err := wh.Close(); !errors.Is(err, ErrWebhookRefused) {
		t.Errorf("Close: %v", err)
	}

	h2 := &handshakeTarget{}
	target2 := httptest.NewServer(h2)
	defer target2.Close()
	wh2, err := e.g.AddWebhook(WebhookConfig{Scope: "/hook/", URL: target2.URL, SkipValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	defer wh2.Close()
	postHook(t, e, "2")
	testutil.WaitFor(t, waitTimeout, "delivery", func() bool { return wh2.Stats().Delivered == 1 })
	if got := h2.seen(); len(got) != 1 || got[0] != http.MethodPost {
		t.Errorf("target saw %v", got)
	}
}

// A target that cannot be reached for the handshake ends the webhook as
// unvalidated once the attempts are spent.
func TestWebhookHandshakeUnanswered(t *testing.T) {
	e := start(t, Config{})
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer target.Close()
	wh, err := e.g.AddWebhook(WebhookConfig{Scope: "/hook/", URL: target.URL, MaxAttempts: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, waitTimeout, "webhook ended", func() bool { return e.g.Stats().WebhooksEnded["unvalidated"] == 1 })
	if err := wh.Close(); !errors.Is(err, ErrWebhookUnvalidated) {
		t.Errorf("Close: %v", err)
	}
}

// A webhook created over HTTP whose target refuses the handshake leaves
// the list, counted.
func TestWebhookHandshakeRefusedOverHTTP(t *testing.T) {
	e := start(t, Config{})
	target := httptest.NewServer(&handshakeTarget{})
	defer target.Close()
	if code, reply := e.do(t, http.MethodPost, WebhooksPath, `{"scope":"/hook/","url":"`+target.URL+`"}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, reply)
	}
	testutil.WaitFor(t, waitTimeout, "the webhook gone from the list", func() bool {
		_, reply := e.do(t, http.MethodGet, WebhooksPath, "")
		return strings.TrimSpace(reply) == "[]"
	})
	if n := e.g.Stats().WebhooksEnded["refused"]; n != 1 {
		t.Errorf("refusals counted: %d", n)
	}
}
