package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Errors of Server.
var (
	// ErrStarted is returned by Start on a server that was already started.
	ErrStarted = errors.New("metrics: server already started")
	// ErrClosed is returned by Start on a closed server.
	ErrClosed = errors.New("metrics: server closed")
)

// NewHandler returns the handler of rsbd's HTTP endpoints:
//
//   - GET /metrics: everything gathered from reg, in the text or OpenMetrics format;
//   - GET /livez: 200 "ok" for as long as the process serves HTTP;
//   - GET /readyz: 200 "ok" when ready returns nil, else 503 with its error text.
//
// A nil ready means always ready. ready is called on the request goroutine and must be
// safe for concurrent use and quick.
func NewHandler(reg prometheus.Gatherer, ready func() error) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: MaxScrapesInFlight,
		Timeout:             ScrapeTimeout,
		EnableOpenMetrics:   true,
	}))
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ready != nil {
			if err := ready(); err != nil {
				writeText(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
				return
			}
		}
		writeText(w, http.StatusOK, "ok")
	})
	return mux
}

// writeText writes a short uncacheable plain-text response.
func writeText(w http.ResponseWriter, code int, body string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body+"\n")
}

// Server serves a handler (normally NewHandler's) over HTTP with the timeouts of
// params.go. It is started once and closed once; Close is idempotent.
type Server struct {
	handler http.Handler
	log     *slog.Logger
	rejects httpRejects

	mu      sync.Mutex
	srv     *http.Server
	ln      net.Listener
	done    chan struct{} // closed when the serve goroutine exits
	err     error         // serve error other than a normal shutdown
	started bool
	closed  bool
}

// NewServer returns a server for h that logs through log (nil means slog.Default()).
func NewServer(h http.Handler, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	return &Server{handler: h, log: log}
}

// Start listens on the TCP address addr (host:port; port 0 picks one, see Addr) and
// serves in a goroutine owned by the server until Close.
func (s *Server) Start(addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case s.started:
		return ErrStarted
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics: listen: %w", err)
	}
	s.started, s.ln, s.done = true, ln, make(chan struct{})
	s.srv = &http.Server{
		Handler:           s.rejects.wrap(s.handler),
		ConnState:         s.rejects.connState,
		ConnContext:       s.rejects.connContext,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	go s.serve(s.srv, limitListener(ln), s.done)
	s.log.Info("metrics: serving", "addr", ln.Addr().String())
	return nil
}

// serve runs the HTTP server until it is shut down.
func (s *Server) serve(srv *http.Server, ln net.Listener, done chan struct{}) {
	defer close(done)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		s.log.Error("metrics: server stopped", "err", err)
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
	}
}

// Addr returns the listening address, or nil before Start.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Close stops the server: it stops accepting, lets requests in progress finish until ctx
// ends, then closes the remaining connections and waits for the serve goroutine. It
// returns ctx's error if it had to cut requests short, or the error that stopped serving
// earlier. Later calls return nil.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	srv, done := s.srv, s.done
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, srv.Close())
	}
	<-done
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(err, s.err)
}
