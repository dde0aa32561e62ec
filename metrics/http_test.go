package metrics

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func get(t *testing.T, h http.Handler, method, path string) (int, string, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Code, rec.Body.String(), rec.Header()
}

func TestHandler(t *testing.T) {
	reg := NewRegistry()
	m := New(reg, WithVersion("v0.1.0"))
	m.EventsIn[PathSocket].Inc()
	var notReady atomic.Pointer[error]
	h := NewHandler(reg, func() error {
		if p := notReady.Load(); p != nil {
			return *p
		}
		return nil
	})

	code, body, hdr := get(t, h, "GET", "/metrics")
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %q", code, hdr.Get("Content-Type"))
	}
	for _, want := range []string{
		`rsbd_received_events_total{path="socket"} 1`,
		`rsbd_build_info{goversion="`,
		"# TYPE rsbd_delivery_latency_seconds histogram",
		"go_goroutines ",
		"process_",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	code, body, hdr = get(t, h, "GET", "/livez")
	if code != http.StatusOK || body != "ok\n" || hdr.Get("Cache-Control") != "no-store" {
		t.Errorf("/livez = %d %q %v", code, body, hdr)
	}
	if code, body, _ = get(t, h, "GET", "/readyz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/readyz ready = %d %q", code, body)
	}
	reason := errors.New("joining cluster")
	notReady.Store(&reason)
	if code, body, _ = get(t, h, "GET", "/readyz"); code != http.StatusServiceUnavailable || body != "not ready: joining cluster\n" {
		t.Errorf("/readyz not ready = %d %q", code, body)
	}
	// Liveness does not depend on readiness.
	if code, _, _ = get(t, h, "GET", "/livez"); code != http.StatusOK {
		t.Errorf("/livez while not ready = %d", code)
	}
	notReady.Store(nil)
	if code, _, _ = get(t, h, "GET", "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after recovery = %d", code)
	}

	if code, _, _ = get(t, h, "HEAD", "/livez"); code != http.StatusOK {
		t.Errorf("HEAD /livez = %d", code)
	}
	if code, _, _ = get(t, h, "POST", "/livez"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /livez = %d", code)
	}
	if code, _, _ = get(t, h, "GET", "/"); code != http.StatusNotFound {
		t.Errorf("GET / = %d", code)
	}
}

func TestHandlerNilReady(t *testing.T) {
	h := NewHandler(NewRegistry(), nil)
	if code, body, _ := get(t, h, "GET", "/readyz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/readyz with nil check = %d %q", code, body)
	}
}

func TestHandlerOpenMetrics(t *testing.T) {
	reg := NewRegistry()
	New(reg)
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	rec := httptest.NewRecorder()
	NewHandler(reg, nil).ServeHTTP(rec, req)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Fatalf("content type %q", ct)
	}
	if body := rec.Body.String(); !strings.HasSuffix(body, "# EOF\n") || !strings.Contains(body, "# TYPE rsbd_drops counter") {
		t.Errorf("OpenMetrics body malformed:\n%.500s", body)
	}
}

func TestServer(t *testing.T) {
	reg := NewRegistry()
	New(reg)
	s := NewServer(NewHandler(reg, nil), quietLogger())
	if s.Addr() != nil {
		t.Error("Addr before Start")
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if err := s.Start("127.0.0.1:0"); !errors.Is(err, ErrStarted) {
		t.Errorf("second Start = %v", err)
	}
	base := "http://" + s.Addr().String()
	client := &http.Client{Timeout: 10 * time.Second}
	for path, want := range map[string]int{"/livez": 200, "/readyz": 200, "/metrics": 200, "/nope": 404} {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := s.Start("127.0.0.1:0"); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close = %v", err)
	}
	client.CloseIdleConnections()
	if resp, err := client.Get(base + "/livez"); err == nil {
		resp.Body.Close()
		t.Error("server still answers after Close")
	}
}

func TestServerErrors(t *testing.T) {
	s := NewServer(http.NotFoundHandler(), nil)
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("Close before Start = %v", err)
	}
	s = NewServer(http.NotFoundHandler(), quietLogger())
	if err := s.Start("256.0.0.1:bad"); err == nil {
		t.Error("Start on a bad address succeeded")
	}
}

func TestServerCloseCutsSlowRequests(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	s := NewServer(h, quietLogger())
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer close(release)
	go func() {
		resp, err := http.Get("http://" + s.Addr().String() + "/")
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace at all: Close must force the connection closed
	if err := s.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close with a request in flight = %v, want context.Canceled", err)
	}
}
