package cloudevents

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

// waitTimeout bounds every wait of these tests: generous, machines are
// shared.
const waitTimeout = 10 * time.Second

// env is a gateway on an embedded node, served by an httptest server.
type env struct {
	g   *Gateway
	srv *httptest.Server
	bus *client.Bus
}

// start starts a node, a bus on it and a gateway with cfg, all closed at
// the end of the test.
func start(t *testing.T, cfg Config) *env {
	t.Helper()
	return startWith(t, cfg, nil)
}

// startWith is start with extra handlers beside the gateway on the same
// server: a request whose path is a key of extra goes to that handler, any
// other to the gateway. A page a browser loads from there has the gateway's
// origin, which its WebSocket handshake must match.
func startWith(t *testing.T, cfg Config, extra map[string]http.Handler) *env {
	t.Helper()
	n := clienttest.StartNodes(t, 1)[0]
	bus := client.Embedded(n)
	if cfg.Logger == nil {
		cfg.Logger = clienttest.Logger()
	}
	g, err := New(bus, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = g
	if extra != nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if x, ok := extra[r.URL.Path]; ok {
				x.ServeHTTP(w, r)
				return
			}
			g.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("gateway close: %v", err)
		}
		srv.Close()
		_ = bus.Close()
	})
	return &env{g: g, srv: srv, bus: bus}
}

// reader returns a reader on sc of e's bus.
func (e *env) reader(t *testing.T, sc string) *client.Reader {
	t.Helper()
	rd, err := e.bus.NewReader(scope.MustParse(sc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rd.Close() })
	return rd
}

// read returns the next event of rd.
func read(t *testing.T, rd *client.Reader) *client.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	ev, err := rd.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return ev
}

// waitSubscribers waits until the gateway serves n subscriptions.
func (e *env) waitSubscribers(t *testing.T, n int64) {
	t.Helper()
	testutil.WaitFor(t, waitTimeout, "subscribers", func() bool { return e.g.Stats().Subscribers == n })
}

// curl returns the path of the curl binary; without one the test is
// skipped, or fails under CI=true.
func curl(t *testing.T) string {
	t.Helper()
	return testutil.Program(t, "curl", "curl")
}

// userInfo returns ev's user info key, failing the test when absent.
func userInfo(t *testing.T, ev *client.Event, key string) string {
	t.Helper()
	v, ok := ev.MetaData.UserInfo(key)
	if !ok {
		t.Fatalf("event %s lacks user info %q: %+v", ev.Scope, key, ev.MetaData.UserInfos)
	}
	return v
}
