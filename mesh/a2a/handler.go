package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/mesh/streamcall"
	"github.com/rsbd/rsbd/scope"
)

// Reasons of the handler's counters (mesh.Counters, protocol "a2a").
const (
	reasonParse     = "parse"      // not JSON (-32700)
	reasonInvalid   = "invalid"    // not a JSON-RPC request (-32600)
	reasonMethod    = "method"     // no such method in the version (-32601)
	reasonParams    = "params"     // bad params (-32602)
	reasonVersion   = "version"    // A2A-Version not supported (-32009)
	reasonTooLarge  = "too_large"  // the body is over MaxMessageBytes
	reasonNoAgent   = "no_agent"   // no agent named, or a path that is no scope
	reasonNoToken   = "no_token"   // a token was needed and none known given
	reasonForbidden = "forbidden"  // the token may not publish on the agent's scope
	reasonHTTP      = "http"       // an HTTP method other than POST (GET for cards)
	reasonAgent     = "agent"      // the agent failed, timed out or answered no JSON
	reasonClosed    = "closed"     // the handler is closed
	dropWrite       = "write"      // a stream's client stopped reading
	dropStreamError = "stream_err" // a stream ended with an error
)

// Handler serves A2A JSON-RPC requests and agent cards over HTTP on a bus
// (see the package documentation). It is an http.Handler, safe for
// concurrent use.
type Handler struct {
	bus *client.Bus
	cfg Config
	ctr *mesh.Counters

	mu      sync.Mutex
	remotes map[scope.Scope]*client.RemoteServer
	callers map[scope.Scope]*streamcall.Caller
	closed  bool
	// streams counts the SSE streams being served, for Close to wait on.
	streams sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

// New returns a Handler calling agents through bus, which the caller keeps
// and closes after the Handler.
func New(bus *client.Bus, cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Handler{bus: bus, cfg: cfg.withDefaults(),
		remotes: make(map[scope.Scope]*client.RemoteServer), callers: make(map[scope.Scope]*streamcall.Caller),
		ctr: mesh.NewCounters(Protocol, mesh.Reasons{
			Rejected: []string{reasonParse, reasonInvalid, reasonMethod, reasonParams, reasonVersion, reasonTooLarge,
				reasonNoAgent, reasonNoToken, reasonForbidden, reasonHTTP, reasonAgent, reasonClosed},
			Dropped: []string{dropWrite, dropStreamError, streamcall.DropMalformed, streamcall.DropLate},
		})}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h, nil
}

// Counters returns the handler's counters: published counts requests
// passed to agents, delivered the responses and stream events written.
func (h *Handler) Counters() *mesh.Counters { return h.ctr }

// Close ends the streams being served, waits for them and closes the
// participants the handler made. Requests after Close get an error.
func (h *Handler) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.cancel()
	h.mu.Unlock()
	h.streams.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for _, r := range h.remotes {
		errs = append(errs, r.Close())
	}
	for _, c := range h.callers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// ServeHTTP serves an agent card (GET) or a JSON-RPC request (POST).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == CardPath || p == LegacyCardPath:
		h.serveCard(w, r, "")
	case p == Prefix || strings.HasPrefix(p, Prefix+"/"):
		rest := p[len(Prefix):]
		if agent, ok := strings.CutSuffix(rest, CardPath); ok {
			h.serveCard(w, r, agent)
			return
		}
		h.serveRPC(w, r, rest)
	default:
		h.ctr.Reject(reasonNoAgent)
		http.NotFound(w, r)
	}
}

// agentScope returns the scope of the agent a path below Prefix names, or
// the default agent's for none.
func (h *Handler) agentScope(rest string) (scope.Scope, error) {
	if strings.Trim(rest, "/") == "" {
		if h.cfg.DefaultAgent == "" {
			return scope.Scope{}, errors.New("no agent named in the path and no default agent")
		}
		rest = h.cfg.DefaultAgent
	}
	sc, err := scope.Parse(rest)
	if err == nil && sc.IsReserved() {
		err = fmt.Errorf("%s is reserved for the bus itself", sc)
	}
	return sc, err
}

// serveRPC answers one JSON-RPC request for the agent the path names.
func (h *Handler) serveRPC(w http.ResponseWriter, r *http.Request, rest string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.ctr.Reject(reasonHTTP)
		http.Error(w, "A2A JSON-RPC takes POST", http.StatusMethodNotAllowed)
		return
	}
	sc, err := h.agentScope(rest)
	if err != nil {
		h.ctr.Reject(reasonNoAgent)
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if !h.authorized(w, r, sc) {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessageBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.ctr.Reject(reasonTooLarge)
			h.writeError(w, http.StatusRequestEntityTooLarge, nil,
				errorf(CodeInvalidRequest, "request larger than %d bytes", MaxMessageBytes))
		}
		return
	}
	req, e := h.parse(r, body)
	if e != nil {
		id := json.RawMessage(nil)
		if req != nil {
			id = req.m.ID
		}
		h.writeError(w, http.StatusOK, id, e)
		return
	}
	h.ctr.AddPublished(1)
	if req.method.Streaming {
		h.serveStream(w, r, sc, req)
		return
	}
	h.call(w, r, sc, req)
}

// authorized checks the request's bearer token may publish on the
// agent's scope; it answers 401 or 403 and returns false otherwise.
func (h *Handler) authorized(w http.ResponseWriter, r *http.Request, sc scope.Scope) bool {
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
		h.ctr.Reject(reasonNoToken)
		w.Header().Set("WWW-Authenticate", `Bearer realm="rsbd"`)
		h.writeError(w, http.StatusUnauthorized, nil, errorf(CodeInvalidRequest, "missing or unknown bearer token"))
		return false
	case !g.MayPublish(sc):
		h.ctr.Reject(reasonForbidden)
		h.writeError(w, http.StatusForbidden, nil, errorf(CodeInvalidRequest, "the token may not call the agent on %s", sc))
		return false
	}
	return true
}

// writeError writes a JSON-RPC error response with HTTP status.
func (h *Handler) writeError(w http.ResponseWriter, status int, id json.RawMessage, e *Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(appendError(nil, id, e), '\n'))
}

// writeResult writes a JSON-RPC result response.
func (h *Handler) writeResult(w http.ResponseWriter, id, result json.RawMessage) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(appendResult(nil, id, result), '\n'))
	h.ctr.AddDelivered(1)
}

// call passes a request that is not streamed to the agent's RSB server
// (method: the operation's 1.0 name, argument: the request's JSON) and
// answers with its result.
func (h *Handler) call(w http.ResponseWriter, r *http.Request, sc scope.Scope, req *request) {
	rs, err := h.remote(sc)
	if err != nil {
		h.ctr.Reject(reasonClosed)
		h.writeError(w, http.StatusServiceUnavailable, req.m.ID, errorf(CodeInternalError, "%v", err))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.CallTimeout)
	defer cancel()
	rep, err := rs.CallEvent(ctx, req.method.V10, req.m.Raw)
	if err != nil {
		h.ctr.Reject(reasonAgent)
		h.writeError(w, http.StatusOK, req.m.ID, agentError(sc, err))
		return
	}
	if !json.Valid(rep.Data) {
		h.ctr.Reject(reasonAgent)
		h.writeError(w, http.StatusOK, req.m.ID, errorf(CodeInvalidAgentResponse, "the agent on %s answered no JSON", sc))
		return
	}
	h.writeResult(w, req.m.ID, rep.Data)
}

// agentError is the JSON-RPC error of a failed call to an agent.
func agentError(sc scope.Scope, err error) *Error {
	var re *client.RemoteError
	switch {
	case errors.As(err, &re):
		return errorf(CodeInternalError, "agent on %s: %s", sc, truncate(re.Message, 1024))
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, client.ErrTimeout):
		return errorf(CodeInternalError, "no answer from an agent on %s in time", sc)
	}
	return errorf(CodeInternalError, "calling the agent on %s: %v", sc, err)
}

// remote returns the handler's RemoteServer for sc, made on first use.
func (h *Handler) remote(sc scope.Scope) (*client.RemoteServer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("a2a: handler closed")
	}
	if rs := h.remotes[sc]; rs != nil {
		return rs, nil
	}
	if len(h.remotes) >= maxAgents {
		return nil, fmt.Errorf("a2a: %d agents called already", maxAgents)
	}
	rs, err := h.bus.NewRemoteServer(sc, client.WithCallTimeout(h.cfg.CallTimeout))
	if err != nil {
		return nil, err
	}
	h.remotes[sc] = rs
	return rs, nil
}

// caller returns the handler's streamcall.Caller for sc, made on first
// use.
func (h *Handler) caller(sc scope.Scope) (*streamcall.Caller, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("a2a: handler closed")
	}
	if c := h.callers[sc]; c != nil {
		return c, nil
	}
	if len(h.callers) >= maxAgents {
		return nil, fmt.Errorf("a2a: %d agents called already", maxAgents)
	}
	c, err := streamcall.NewCaller(h.bus, sc, streamcall.CallerConfig{FirstChunkTimeout: h.cfg.CallTimeout,
		Dropped: func(r string) { h.ctr.AddDropped(r, 1) }})
	if err != nil {
		return nil, err
	}
	h.callers[sc] = c
	return c, nil
}
