package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/introspection"
	"github.com/rsbd/rsbd/scope"
)

// serve starts a Handler on an embedded bus of a node, with a listener of
// a second bus to be seen, and returns its server and the second bus.
func serve(t *testing.T) (*httptest.Server, *client.Bus) {
	t.Helper()
	nodes := clienttest.StartNodes(t, 1)
	bus := client.Embedded(nodes[0])
	t.Cleanup(func() { bus.Close() })
	coll, err := introspection.NewCollector(bus, introspection.Config{PingInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { coll.Close() })
	h, err := New(bus, coll, Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	other, err := client.Dial(ctx, "socket://"+nodes[0].SocketAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	if _, err := other.NewListener(scope.MustParse("/web/test")); err != nil {
		t.Fatal(err)
	}
	return srv, other
}

func getData(t *testing.T, url string, v any) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Data  json.RawMessage `json:"data"`
		Error string          `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	if v != nil && env.Data != nil {
		if err := json.Unmarshal(env.Data, v); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, env.Error
}

// TestHandlerAPI checks the snapshot, the search and its errors, the scope
// rates, and the page.
func TestHandlerAPI(t *testing.T) {
	srv, other := serve(t)
	var snap introspection.Snapshot
	testutil.WaitFor(t, 20*time.Second, "the listener in the snapshot", func() bool {
		getData(t, srv.URL+"/api/introspection/snapshot", &snap)
		_, _, n := snap.Count()
		return n >= 1
	})
	var ms []introspection.Match
	if code, e := getData(t, srv.URL+"/api/introspection/search?query=%2Fweb%2Ftest%2F+listener", &ms); code != 200 || len(ms) != 1 || ms[0].Kind != "participant" {
		t.Errorf("search: %d %q %v", code, e, ms)
	}
	for _, q := range []string{"?query=%2F%2Fa%5B%40b%5D", "", "?query=x&start=-1", "?query=x&limit=y", "?query=x&start=9"} {
		if code, e := getData(t, srv.URL+"/api/introspection/search"+q, nil); code != 400 || e == "" {
			t.Errorf("search%s: %d %q", q, code, e)
		}
	}
	inf, err := other.NewInformer(scope.MustParse("/web/rated"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []ScopeRate
	testutil.WaitFor(t, 20*time.Second, "a rate for /web/rated/", func() bool {
		inf.Publish(context.Background(), "x")
		getData(t, srv.URL+"/api/scopes", &rows)
		for _, r := range rows {
			if r.Scope == "/web/rated/" && r.Events > 0 && r.EventRate > 0 {
				return true
			}
		}
		return false
	})
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("page: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// TestHandlerTail streams an event published on the tailed scope, and
// refuses a bad scope.
func TestHandlerTail(t *testing.T) {
	srv, other := serve(t)
	if code, e := getData(t, srv.URL+"/api/tail?scope=not-a-scope", nil); code != 400 || e == "" {
		t.Errorf("bad scope: %d %q", code, e)
	}
	resp, err := http.Get(srv.URL + "/api/tail?scope=/web/tail/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
	}
	events := make(chan TailEvent, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var te TailEvent
				if json.Unmarshal([]byte(d), &te) == nil {
					events <- te
				}
			}
		}
	}()
	inf, err := other.NewInformer(scope.MustParse("/web/tail/sub"))
	if err != nil {
		t.Fatal(err)
	}
	var got TailEvent
	testutil.WaitFor(t, 20*time.Second, "the event in the tail", func() bool {
		inf.Publish(context.Background(), []byte{0xff, 0x00})
		select {
		case got = <-events:
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
	if got.Scope != "/web/tail/sub/" || got.Base64 != "/wA=" || got.Size != 2 || got.Text != "" {
		t.Fatalf("tail event %+v", got)
	}
}
