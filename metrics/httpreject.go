package metrics

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/netutil"
)

// HTTPRejectReason says why the HTTP endpoints turned a client away.
// Append only: the values index the counters and name the metric labels.
type HTTPRejectReason int

const (
	// HTTPNoRequest: a connection closed before it carried a complete
	// request (malformed request line, headers over MaxHeaderBytes, the
	// header timeout, or nothing sent at all).
	HTTPNoRequest HTTPRejectReason = iota
	// HTTPNotFound: an unknown path or method (404, 405).
	HTTPNotFound
	// HTTPBadRequest: another 4xx answer.
	HTTPBadRequest
	// HTTPUnavailable: a 503 (too many scrapes at once, or not ready).
	HTTPUnavailable

	// NumHTTPRejectReasons is the number of reasons.
	NumHTTPRejectReasons
)

var httpRejectNames = [NumHTTPRejectReasons]string{"no_request", "not_found", "bad_request", "unavailable"}

// String returns the reason's metric label.
func (r HTTPRejectReason) String() string {
	if r < 0 || r >= NumHTTPRejectReasons {
		return "unknown"
	}
	return httpRejectNames[r]
}

// httpRejects counts a Server's rejections and tracks which of its
// connections carried a request.
type httpRejects struct {
	counts [NumHTTPRejectReasons]atomic.Uint64

	mu     sync.Mutex
	served map[net.Conn]bool // open connections; true once a handler ran
}

// connKey is the context key under which connContext stores the
// connection a request came on.
type connKey struct{}

// connContext is the http.Server ConnContext hook: it lets the handler
// wrapper mark the request's connection as served.
func (r *httpRejects) connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// markServed notes that a handler ran for a request on c.
func (r *httpRejects) markServed(c net.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.served[c]; ok {
		r.served[c] = true
	}
}

// connState is the http.Server ConnState hook: a connection that closes
// (or is hijacked) before a handler ran counts as HTTPNoRequest. The map
// holds open connections only, at most MaxHTTPConns.
func (r *httpRejects) connState(c net.Conn, st http.ConnState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch st {
	case http.StateNew:
		if r.served == nil {
			r.served = make(map[net.Conn]bool)
		}
		r.served[c] = false
	case http.StateClosed, http.StateHijacked:
		if served, ok := r.served[c]; ok && !served {
			r.counts[HTTPNoRequest].Add(1)
		}
		delete(r.served, c)
	}
}

// wrap counts the 4xx and 5xx answers of h by reason.
func (r *httpRejects) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if c, ok := req.Context().Value(connKey{}).(net.Conn); ok {
			r.markServed(c)
		}
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, req)
		switch code := sw.code; {
		case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
			r.counts[HTTPNotFound].Add(1)
		case code == http.StatusServiceUnavailable:
			r.counts[HTTPUnavailable].Add(1)
		case code >= 400 && code < 500:
			r.counts[HTTPBadRequest].Add(1)
		}
	})
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

// WriteHeader records code and passes it on.
func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200.
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// limitListener bounds the connections served at once; more wait in the
// kernel's accept queue.
func limitListener(ln net.Listener) net.Listener { return netutil.LimitListener(ln, MaxHTTPConns) }

// HTTPRejects returns how many clients the server turned away, by reason.
func (s *Server) HTTPRejects() [NumHTTPRejectReasons]uint64 {
	var out [NumHTTPRejectReasons]uint64
	for i := range out {
		out[i] = s.rejects.counts[i].Load()
	}
	return out
}

// Collector exports HTTPRejects as rsbd_http_rejected_total{reason}.
func (s *Server) Collector() prometheus.Collector {
	var ms []SnapshotMetric[[NumHTTPRejectReasons]uint64]
	for r := range NumHTTPRejectReasons {
		ms = append(ms, SnapshotMetric[[NumHTTPRejectReasons]uint64]{Name: "rsbd_http_rejected_total",
			Help:   "Clients of the metrics and health endpoints turned away, by reason.",
			Type:   prometheus.CounterValue,
			Labels: prometheus.Labels{"reason": r.String()},
			Value:  func(c [NumHTTPRejectReasons]uint64) float64 { return float64(c[r]) }})
	}
	return NewSnapshotCollector(s.HTTPRejects, ms...)
}
