package cloudevents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
)

// do sends a request with method and body to path of e's gateway and
// returns the status and the reply.
func (e *env) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, reply := testutil.Do(t, http.DefaultClient, req)
	return resp.StatusCode, reply
}

func TestWebhooksOverHTTP(t *testing.T) {
	e := start(t, Config{})
	rcv := &receiver{}
	target := httptest.NewServer(rcv)
	defer target.Close()

	code, reply := e.do(t, http.MethodPost, WebhooksPath,
		fmt.Sprintf(`{"scope":"/hook/","url":%q,"filter":{"suffix":{"subject":"/yes/"}},"deadLetter":"/dead/"}`, target.URL))
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, reply)
	}
	var created struct{ ID string }
	if err := json.Unmarshal([]byte(reply), &created); err != nil || created.ID == "" {
		t.Fatalf("create reply %s: %v", reply, err)
	}
	e.waitSubscribers(t, 1)
	e.publishRSB(t, "/hook/no/", "filtered out")
	e.publishRSB(t, "/hook/yes/", "through the webhook")
	testutil.WaitFor(t, waitTimeout, "webhook delivery", func() bool { return len(rcv.got()) == 1 })
	if got := rcv.got()[0]; string(got.Data) != "through the webhook" {
		t.Errorf("delivered %+v", got)
	}

	code, reply = e.do(t, http.MethodGet, WebhooksPath, "")
	var list []webhookEntry
	if err := json.Unmarshal([]byte(reply), &list); code != http.StatusOK || err != nil || len(list) != 1 ||
		list[0].ID != created.ID || list[0].Scope != "/hook/" || list[0].DeadLetter != "/dead/" {
		t.Fatalf("list: %d %s %v", code, reply, err)
	}
	testutil.WaitFor(t, waitTimeout, "delivered counted", func() bool {
		_, reply := e.do(t, http.MethodGet, WebhooksPath, "")
		return strings.Contains(reply, `"Delivered":1`)
	})

	if code, reply := e.do(t, http.MethodDelete, WebhooksPath+"/"+created.ID, ""); code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", code, reply)
	}
	e.waitSubscribers(t, 0)
	if code, reply := e.do(t, http.MethodGet, WebhooksPath, ""); code != http.StatusOK || strings.TrimSpace(reply) != "[]" {
		t.Errorf("list after delete: %d %s", code, reply)
	}
	if code, _ := e.do(t, http.MethodDelete, WebhooksPath+"/"+created.ID, ""); code != http.StatusNotFound {
		t.Errorf("second delete: %d", code)
	}
}

func TestWebhookRequestsRefused(t *testing.T) {
	e := start(t, Config{})
	for _, c := range []struct {
		method, path, body string
		code               int
		reason             string
	}{
		{"POST", WebhooksPath, `{"scope":"/a/","url":"http://x/"`, 400, "webhook"},
		{"POST", WebhooksPath, `{"scope":"/a/","url":"http://x/","colour":"red"}`, 400, "webhook"},
		{"POST", WebhooksPath, `{"url":"http://x/"}`, 400, "webhook"},
		{"POST", WebhooksPath, `{"scope":"/a/","url":"ftp://x/"}`, 400, "webhook"},
		{"POST", WebhooksPath, `{"scope":"a","url":"http://x/"}`, 400, "webhook"},
		{"POST", WebhooksPath, `{"scope":"/a/","url":"http://x/","filter":{"bogus":{}}}`, 400, "webhook"},
		{"POST", WebhooksPath, `{"scope":"/a/","url":"http://x/","deadLetter":"/a/dead/"}`, 400, "webhook"},
		{"POST", WebhooksPath, `{"scope":"/a/","url":"http://x/"} {}`, 400, "webhook"},
		{"POST", WebhooksPath, strings.Repeat(" ", maxWebhookRequest+1), 413, "too_large"},
		{"PUT", WebhooksPath, ``, 405, "method"},
		{"GET", WebhooksPath + "/abc", ``, 405, "method"},
		{"GET", AdminPrefix + "other", ``, 404, "not_found"},
	} {
		before := e.g.Stats().Rejected[c.reason]
		code, reply := e.do(t, c.method, c.path, c.body)
		if code != c.code || e.g.Stats().Rejected[c.reason] != before+1 {
			t.Errorf("%s %s %.60q: %d %s, want %d counted as %s", c.method, c.path, c.body, code, reply, c.code, c.reason)
		}
	}
}

func TestWebhooksBounded(t *testing.T) {
	e := start(t, Config{})
	for i := range maxHTTPWebhooks {
		if code, reply := e.do(t, http.MethodPost, WebhooksPath, `{"scope":"/many/","url":"http://127.0.0.1:9/"}`); code != http.StatusCreated {
			t.Fatalf("webhook %d: %d %s", i, code, reply)
		}
	}
	code, _ := e.do(t, http.MethodPost, WebhooksPath, `{"scope":"/many/","url":"http://127.0.0.1:9/"}`)
	if code != http.StatusConflict || e.g.Stats().Rejected["webhooks"] != 1 {
		t.Errorf("one over the bound: %d, rejected %v", code, e.g.Stats().Rejected)
	}
}
