package streamcall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/scope"
)

// HTTPProtocol is the protocol label of the HTTP handler's counters.
const HTTPProtocol = "stream"

// Reasons of the HTTP handler's counters.
const (
	reasonHTTPMethod = "method"    // not a POST
	reasonScope      = "scope"     // the path is no scope
	reasonTooLarge   = "too_large" // the body is over MaxPromptBytes
	reasonParams     = "params"    // a bad timeout
	reasonNoToken    = "no_token"  // a token was needed and none known given
	reasonForbidden  = "forbidden" // the token may not publish on the scope
	reasonCall       = "call"      // the call could not be opened
	dropWrite        = "write"     // the client stopped reading
	dropStreamErr    = "stream_err"
)

// HTTPConfig configures an HTTPHandler. The zero value works.
type HTTPConfig struct {
	// Timeout bounds a call whose request names none, and any it names
	// (DefaultHTTPTimeout).
	Timeout time.Duration
	// WriteTimeout bounds one write to a client (DefaultHTTPWriteTimeout).
	WriteTimeout time.Duration
	// Tokens returns the bearer tokens in force (nil or empty: none); a
	// call then needs one that may publish on the server's scope.
	Tokens func() *mesh.Tokens
	// Logger receives the handler's log; nil logs nothing.
	Logger *slog.Logger
}

// HTTPHandler serves streamed calls to HTTP clients: a POST to
// HTTPPrefix + scope opens a call to the server on scope with the body as
// the prompt (query parameters model, conv and timeout, a Go duration)
// and answers with Server-Sent Events: a chunk is an event with its seq as
// the SSE id and its text (invalid UTF-8 replaced) on data lines, the last
// chunk an event of type "done", a failed call an event of type "error"
// with the error's text. A client that goes away cancels the call.
type HTTPHandler struct {
	bus *client.Bus
	cfg HTTPConfig
	ctr *mesh.Counters

	mu      sync.Mutex
	callers map[scope.Scope]*Caller
	closed  bool
}

// NewHTTPHandler returns an HTTPHandler calling through bus, which the
// caller keeps and closes after the handler.
func NewHTTPHandler(bus *client.Bus, cfg HTTPConfig) *HTTPHandler {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultHTTPTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultHTTPWriteTimeout
	}
	if cfg.Tokens == nil {
		cfg.Tokens = func() *mesh.Tokens { return nil }
	}
	return &HTTPHandler{bus: bus, cfg: cfg, callers: make(map[scope.Scope]*Caller),
		ctr: mesh.NewCounters(HTTPProtocol, mesh.Reasons{
			Rejected: []string{reasonHTTPMethod, reasonScope, reasonTooLarge, reasonParams, reasonNoToken, reasonForbidden, reasonCall},
			Dropped:  []string{dropWrite, dropStreamErr, DropMalformed, DropLate},
		})}
}

// Counters returns the handler's counters: published counts calls opened,
// delivered the chunks written.
func (h *HTTPHandler) Counters() *mesh.Counters { return h.ctr }

// Close closes the Callers the handler made; streams in progress fail.
// It is idempotent.
func (h *HTTPHandler) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	var errs []error
	for _, c := range h.callers {
		errs = append(errs, c.Close())
	}
	clear(h.callers)
	return errors.Join(errs...)
}

// ServeHTTP serves one streamed call.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.fail(w, http.StatusMethodNotAllowed, reasonHTTPMethod, "streamed calls take POST")
		return
	}
	sc, err := scope.Parse(strings.TrimPrefix(r.URL.Path, HTTPPrefix))
	if err == nil && sc.IsReserved() {
		err = fmt.Errorf("%s is reserved for the bus itself", sc)
	}
	if err != nil {
		h.fail(w, http.StatusNotFound, reasonScope, err.Error())
		return
	}
	if !h.authorized(w, r, sc) {
		return
	}
	q := r.URL.Query()
	timeout := h.cfg.Timeout
	if t := q.Get("timeout"); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			h.fail(w, http.StatusBadRequest, reasonParams, "timeout must be a positive Go duration")
			return
		}
		timeout = min(d, h.cfg.Timeout)
	}
	prompt, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxPromptBytes))
	if err != nil {
		h.fail(w, http.StatusRequestEntityTooLarge, reasonTooLarge, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	s, err := h.open(ctx, sc, Request{Prompt: prompt, Model: q.Get("model"), Conv: q.Get("conv")})
	if err != nil {
		h.fail(w, http.StatusServiceUnavailable, reasonCall, err.Error())
		return
	}
	defer s.Close()
	h.ctr.AddPublished(1)
	h.relay(w, s)
}

// open opens a call through the handler's Caller for sc.
func (h *HTTPHandler) open(ctx context.Context, sc scope.Scope, req Request) (*Stream, error) {
	h.mu.Lock()
	c := h.callers[sc]
	if c == nil {
		if h.closed || len(h.callers) >= maxHTTPScopes {
			h.mu.Unlock()
			return Call(ctx, h.bus, sc, req)
		}
		var err error
		if c, err = NewCaller(h.bus, sc, CallerConfig{Dropped: func(r string) { h.ctr.AddDropped(r, 1) }}); err != nil {
			h.mu.Unlock()
			return nil, err
		}
		h.callers[sc] = c
	}
	h.mu.Unlock()
	return c.Call(ctx, req)
}

// relay writes the stream's chunks as SSE events until its end.
func (h *HTTPHandler) relay(w http.ResponseWriter, s *Stream) {
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	h.ctr.AddSubscribers(1)
	defer h.ctr.AddSubscribers(-1)
	var buf []byte
	for {
		c, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return
		}
		buf = buf[:0]
		switch {
		case err != nil:
			h.ctr.AddDropped(dropStreamErr, 1)
			buf = appendSSE(buf, "error", c.Seq, []byte(err.Error()))
		case c.Done:
			buf = appendSSE(buf, "done", c.Seq, c.Data)
		default:
			buf = appendSSE(buf, "", c.Seq, c.Data)
		}
		_ = rc.SetWriteDeadline(time.Now().Add(h.cfg.WriteTimeout))
		if _, werr := w.Write(buf); werr != nil || rc.Flush() != nil {
			h.ctr.AddDropped(dropWrite, 1)
			return
		}
		h.ctr.AddDelivered(1)
		if err != nil || c.Done {
			return
		}
	}
}

// appendSSE appends an SSE event: its type (none: the default), its id
// and data cut into data lines at each line break.
func appendSSE(b []byte, typ string, seq uint32, data []byte) []byte {
	if typ != "" {
		b = append(append(append(b, "event: "...), typ...), '\n')
	}
	b = strconv.AppendUint(append(b, "id: "...), uint64(seq), 10)
	b = append(b, '\n')
	data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	for {
		line, rest, more := cutLine(data)
		b = append(append(append(b, "data: "...), line...), '\n')
		if !more {
			return append(b, '\n')
		}
		data = rest
	}
}

// cutLine cuts data at its first line break (CR, LF or CRLF).
func cutLine(data []byte) (line, rest []byte, found bool) {
	i := bytes.IndexAny(data, "\r\n")
	if i < 0 {
		return data, nil, false
	}
	j := i + 1
	if data[i] == '\r' && j < len(data) && data[j] == '\n' {
		j++
	}
	return data[:i], data[j:], true
}

// authorized checks the request's bearer token may publish on sc; it
// answers 401 or 403 and returns false otherwise.
func (h *HTTPHandler) authorized(w http.ResponseWriter, r *http.Request, sc scope.Scope) bool {
	ts := h.cfg.Tokens()
	if !ts.Required() {
		return true
	}
	var g *mesh.Grant
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		g = ts.Lookup(strings.TrimSpace(tok))
	}
	switch {
	case g == nil:
		w.Header().Set("WWW-Authenticate", `Bearer realm="rsbd"`)
		h.fail(w, http.StatusUnauthorized, reasonNoToken, "missing or unknown bearer token")
		return false
	case !g.MayPublish(sc):
		h.fail(w, http.StatusForbidden, reasonForbidden, fmt.Sprintf("the token may not call %s", sc))
		return false
	}
	return true
}

// fail answers status with a message and counts the refusal.
func (h *HTTPHandler) fail(w http.ResponseWriter, status int, reason, msg string) {
	h.ctr.Reject(reason)
	http.Error(w, msg, status)
}
