package web

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/introspection"
)

// Errors the Handler replies with.
var (
	// ErrConfig is wrapped by the errors of Config.Validate and New.
	ErrConfig       = errors.New("web: invalid config")
	errNoFlush      = errors.New("web: the connection cannot stream")
	errTooManyTails = errors.New("web: too many tails at once")
)

//go:embed static
var static embed.FS

// Config configures a Handler. The zero value works.
type Config struct {
	// ResponseTimeout bounds the daemon survey of /api/daemons (default
	// introspection.DefaultResponseTimeout).
	ResponseTimeout time.Duration
	// Logger receives errors of requests (default: discarded).
	Logger *slog.Logger
}

// DefaultConfig returns the configuration the zero Config stands for.
func DefaultConfig() Config {
	return Config{ResponseTimeout: introspection.DefaultResponseTimeout, Logger: slog.New(slog.DiscardHandler)}
}

// Validate reports a negative timeout.
func (c Config) Validate() error {
	if c.ResponseTimeout < 0 {
		return fmt.Errorf("%w: negative response timeout", ErrConfig)
	}
	return nil
}

// Handler serves the introspection API and page of one bus.
type Handler struct {
	bus   *client.Bus
	coll  *introspection.Collector
	cfg   Config
	mux   *http.ServeMux
	rates *rates
	tails chan struct{}
	done  chan struct{}
	once  sync.Once
}

// New returns a Handler serving what coll collects on bus.
func New(bus *client.Bus, coll *introspection.Collector, cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if bus == nil || coll == nil {
		return nil, fmt.Errorf("%w: no bus or collector", ErrConfig)
	}
	d := DefaultConfig()
	if cfg.ResponseTimeout == 0 {
		cfg.ResponseTimeout = d.ResponseTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = d.Logger
	}
	h := &Handler{bus: bus, coll: coll, cfg: cfg, mux: http.NewServeMux(), rates: newRates(bus),
		tails: make(chan struct{}, maxTails), done: make(chan struct{})}
	files, err := fs.Sub(static, "static")
	if err != nil {
		return nil, err
	}
	h.mux.Handle("GET /", http.FileServerFS(files))
	h.mux.HandleFunc("GET /api/introspection/snapshot", h.serveSnapshot)
	h.mux.HandleFunc("GET /api/introspection/search", h.serveSearch)
	h.mux.HandleFunc("GET /api/scopes", h.serveScopes)
	h.mux.HandleFunc("GET /api/daemons", h.serveDaemons)
	h.mux.HandleFunc("GET /api/tail", h.serveTail)
	return h, nil
}

// ServeHTTP serves a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Close ends the tails and the rate listener. It is idempotent.
func (h *Handler) Close() error {
	h.once.Do(func() {
		close(h.done)
		h.rates.close()
	})
	return nil
}

func (h *Handler) serveSnapshot(w http.ResponseWriter, _ *http.Request) {
	replyData(w, h.coll.Snapshot())
}

func (h *Handler) serveSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	start, err1 := optionalInt(q.Get("start"), 0)
	limit, err2 := optionalInt(q.Get("limit"), defaultSearchLimit)
	if err := errors.Join(err1, err2); err != nil {
		replyError(w, http.StatusBadRequest, err)
		return
	}
	if !q.Has("query") {
		replyError(w, http.StatusBadRequest, errors.New("missing required argument query"))
		return
	}
	ms, err := introspection.Search(h.coll.Snapshot(), q.Get("query"), start, limit)
	if err != nil {
		replyError(w, http.StatusBadRequest, err)
		return
	}
	replyData(w, ms)
}

func (h *Handler) serveScopes(w http.ResponseWriter, _ *http.Request) {
	rows, err := h.rates.snapshot()
	if err != nil {
		replyError(w, http.StatusInternalServerError, err)
		return
	}
	replyData(w, rows)
}

func (h *Handler) serveDaemons(w http.ResponseWriter, r *http.Request) {
	ds, err := introspection.SurveyDaemons(r.Context(), h.bus, h.cfg.ResponseTimeout)
	if err != nil {
		replyError(w, http.StatusInternalServerError, err)
		return
	}
	replyData(w, ds)
}

// optionalInt parses a non-negative integer argument, def when absent.
func optionalInt(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("argument %q is not a non-negative integer", s)
	}
	return n, nil
}

// replyData writes {"data": v}.
func replyData(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(struct {
		Data any `json:"data"`
	}{v})
}

// replyError writes {"error": err} with code.
func replyError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(struct {
		Error string `json:"error"`
	}{err.Error()})
}
