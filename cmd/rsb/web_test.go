package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/introspection"
)

// startWeb runs rsb web against the second daemon of c and returns its
// base URL.
func startWeb(t *testing.T, c introspectCluster) string {
	t.Helper()
	first, _ := startProcess(t, true, nil, c.rsb, "web", "--address", "127.0.0.1", "--port", "0", c.ds[1].URI())
	base, ok := strings.CutPrefix(first, "rsb web: serving ")
	if !ok {
		t.Fatalf("rsb web printed %q", first)
	}
	return strings.TrimSuffix(base, "/")
}

// getJSON fetches an API endpoint: its status and its data or error.
func getJSON(t *testing.T, u string, data any) (int, string) {
	t.Helper()
	resp, body := testutil.Get(t, u)
	b := []byte(body)
	var env struct {
		Data  json.RawMessage `json:"data"`
		Error string          `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("%s: %v: %s", u, err, b)
	}
	if env.Data != nil && data != nil {
		if err := json.Unmarshal(env.Data, data); err != nil {
			t.Fatalf("%s: %v: %s", u, err, b)
		}
	}
	return resp.StatusCode, env.Error
}

// TestWebAPI runs rsb web against a daemon of a two-daemon cluster and
// checks the rsb-tools-cl endpoints, the scope rates, the daemons and a
// tail.
func TestWebAPI(t *testing.T) {
	c := startIntrospectCluster(t)
	base := startWeb(t, c)
	var snap introspection.Snapshot
	testutil.WaitFor(t, 60*time.Second, "the helper's participants in the snapshot", func() bool {
		getJSON(t, base+"/api/introspection/snapshot", &snap)
		_, _, n := snap.Count()
		return n >= 8
	})
	var ms []introspection.Match
	if code, e := getJSON(t, base+"/api/introspection/search?query="+url.QueryEscape("golden reader"), &ms); code != 200 ||
		len(ms) != 1 || ms[0].Kind != "participant" {
		t.Errorf("search: %d %q %+v", code, e, ms)
	}
	if code, _ := getJSON(t, base+"/api/introspection/search?query=golden&start=1&limit=2", &ms); code != 200 || len(ms) != 2 {
		t.Errorf("search with start and limit: %d %+v", code, ms)
	}
	if code, e := getJSON(t, base+"/api/introspection/search?query="+url.QueryEscape("//participant[@kind]"), nil); code != 400 || e == "" {
		t.Errorf("an XPath query: %d %q", code, e)
	}
	if code, e := getJSON(t, base+"/api/introspection/search", nil); code != 400 || !strings.Contains(e, "query") {
		t.Errorf("no query: %d %q", code, e)
	}
	var ds []introspection.DaemonStatus
	if code, e := getJSON(t, base+"/api/daemons", &ds); code != 200 || len(ds) != 2 {
		t.Errorf("daemons: %d %q %+v", code, e, ds)
	}

	tail, err := http.Get(base + "/api/tail?scope=/golden/")
	if err != nil {
		t.Fatal(err)
	}
	defer tail.Body.Close()
	lines := make(chan string, 16)
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := tail.Body.Read(b)
			if n > 0 {
				lines <- string(b[:n])
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	send := processInvoker(c.rsb)
	var got string
	var rates []struct {
		Scope  string `json:"scope"`
		Events uint64 `json:"events"`
	}
	testutil.WaitForMsg(t, 60*time.Second, func() string { return "the event in the tail and the rates: " + got }, func() bool {
		getJSON(t, base+"/api/scopes", &rates)
		if r := send(context.Background(), "", "send", `"through the web"`, c.ds[0].URI()+"/golden/web"); r.code != exitOK {
			t.Fatalf("send: %s", r.stderr)
		}
		select {
		case l := <-lines:
			got += l
		case <-time.After(200 * time.Millisecond):
		}
		counted := false
		for _, r := range rates {
			counted = counted || r.Scope == "/golden/web/" && r.Events > 0
		}
		return strings.Contains(got, `"text":"through the web"`) && strings.Contains(got, `"scope":"/golden/web/"`) && counted
	})
}
